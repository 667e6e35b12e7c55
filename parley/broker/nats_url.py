"""A broker URL, read and checked once: ``nats://[user:password@|token@]host[:port]``,
``tls://…`` for TLS, several servers of one cluster separated by commas."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from parley.errors import Invalid

SCHEMES = ("nats", "tls")
DEFAULT_PORT = 4222


@dataclass(frozen=True)
class NatsAddress:
    servers: tuple[str, ...]  # scheme://host:port, without credentials
    user: str | None = None
    password: str | None = None
    token: str | None = None

    @property
    def tls(self) -> bool:
        return self.servers[0].startswith("tls://")

    @property
    def shown(self) -> str:
        """For logs, errors and /healthz: credentials never leave through here."""
        return ",".join(self.servers)


def parse_nats_url(url: str) -> NatsAddress:
    parts = [part.strip() for part in url.split(",")]
    if not url.strip() or not all(parts):
        raise Invalid("the broker URL is empty; give nats://host:4222 or tls://host:4222")
    servers: list[str] = []
    credentials: set[tuple[str | None, str | None]] = set()
    for part in parts:
        server, user, password = _one_server(part)
        servers.append(server)
        credentials.add((user, password))
    if len({server.split("://")[0] for server in servers}) > 1:
        raise Invalid("the broker URL mixes nats:// and tls:// servers; use one scheme")
    if len(credentials) > 1:
        raise Invalid("the broker URL's servers carry different credentials; give them once")
    user, password = credentials.pop()
    if user is not None and password is None:
        return NatsAddress(tuple(servers), token=user)
    return NatsAddress(tuple(servers), user=user, password=password)


def _one_server(part: str) -> tuple[str, str | None, str | None]:
    if "://" not in part:
        raise Invalid(f"the broker URL {_hidden(part)!r} needs a scheme: nats:// or tls://")
    split = urlsplit(part)
    if split.scheme not in SCHEMES:
        raise Invalid(
            f"the broker URL must start with nats:// or tls://, not {split.scheme + '://'!r}"
        )
    if split.path not in ("", "/") or split.query or split.fragment:
        raise Invalid(f"the broker URL {_hidden(part)!r} has a path or query; give host:port only")
    if not split.hostname:
        raise Invalid(f"the broker URL {_hidden(part)!r} names no host")
    try:
        port = split.port or DEFAULT_PORT
    except ValueError:
        raise Invalid(f"the broker URL {_hidden(part)!r} has a bad port") from None
    host = f"[{split.hostname}]" if ":" in split.hostname else split.hostname
    user = unquote(split.username) if split.username else None
    password = unquote(split.password) if split.password is not None else None
    return f"{split.scheme}://{host}:{port}", user, password


def _hidden(part: str) -> str:
    """The URL as the person typed it, less anything before an @ (a password or token)."""
    scheme, _, rest = part.rpartition("://")
    return f"{scheme}://{rest.rpartition('@')[2]}" if scheme else part.rpartition("@")[2]
