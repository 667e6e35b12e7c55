"""Where Parley's HTTP clients may connect when someone outside names the place: an A2A client's
push URL, the interfaces an A2A agent's card names. Each request's host is resolved once and
every address it resolves to checked: none may be loopback, private, shared, link-local,
reserved, multicast or unspecified (169.254.169.254 is link-local), unless an owner named or
allowed the host. The request is then sent to the first address, the URL's name kept as the
Host header and as the TLS name (the certificate is verified for it): resolved again to
connect, a name that answers outside for the check and inside a moment later (DNS rebinding)
would reach what the check refused. It is a client's request hook, not a transport: given a
transport, httpx takes no proxy from the environment (``HTTPS_PROXY``); a hook runs before
httpx picks the proxy, which is then given the checked address too."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Collection

import httpx

# The addresses a host resolves to (host, port): the system's resolver, or a test's.
Resolver = Callable[[str, int], Awaitable[list[str]]]

DEFAULT_PORTS = {"http": 80, "https": 443}


class InsideRefused(httpx.ConnectError):
    """A request to a host that resolves inside: never connected."""


class Unresolved(httpx.ConnectError):
    """A request to a host that resolves to nothing (now, at least): never connected."""


async def resolved(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


async def checked_addresses(
    url: httpx.URL, trusted_hosts: Collection[str], resolve: Resolver = resolved
) -> list[str]:
    """The addresses to connect to for ``url``, in the resolver's order: all of its host's, each
    outside unless the host is trusted (lowercase names); ``InsideRefused`` otherwise, and
    ``Unresolved`` for none."""
    host = url.raw_host.decode("ascii")
    try:
        addresses = await resolve(host, url.port or DEFAULT_PORTS.get(url.scheme, 443))
    except OSError:
        addresses = []
    if not addresses:
        raise Unresolved(f"{host} does not resolve")
    if host.lower() not in trusted_hosts and any(inside(address) for address in addresses):
        raise InsideRefused(
            f"{host} resolves to a loopback, private, link-local, reserved or metadata address"
        )
    return addresses


def inside(address: str) -> bool:
    """Not a public unicast destination (an IPv4-mapped IPv6 address judged as the IPv4 one
    inside it; 100.64.0.0/10, shared, is not global either)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        not ip.is_global
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


class Guard:
    """A client's request hook (``event_hooks={"request": [guard.pin]}``): each request checked
    (``checked_addresses``) and sent to the first address checked."""

    def __init__(self, trusted_hosts: Collection[str] = (), resolve: Resolver = resolved) -> None:
        self._trusted = frozenset(host.lower() for host in trusted_hosts)
        self._resolve = resolve

    async def pin(self, request: httpx.Request) -> None:
        url = request.url
        [address, *_] = await checked_addresses(url, self._trusted, self._resolve)
        request.headers["Host"] = url.netloc.decode("ascii")
        request.extensions["sni_hostname"] = url.raw_host.decode("ascii")
        request.url = url.copy_with(host=address)
