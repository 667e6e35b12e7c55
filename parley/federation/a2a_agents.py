"""The one client to A2A agents: their cards (read when an owner adds one), and a2a-sdk's client
per connection over its own HTTP pool, its token as bearer. Whatever an agent answers is turned
into the error tree here: it cannot be reached, or it answers garbage or an HTTP error, is
``Unavailable`` (retried); a JSON-RPC error it answers on purpose is ``A2ARefused``, final.
a2a-sdk's client is imported at first use: some 50-70 ms of CPU at every start, for a server
that may never call an A2A agent."""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import httpx
from a2a.types.a2a_pb2 import AgentCard
from a2a.utils.errors import A2AError
from google.protobuf import json_format

from parley.errors import Invalid, ParleyError, Unavailable
from parley.federation.model import PeerEndpoint
from parley.naming import is_name
from parley.outbound import (
    Guard,
    InsideRefused,
    Resolver,
    Unresolved,
    checked_addresses,
    resolved,
)
from parley.redact import redact
from parley.tls import trusted

if TYPE_CHECKING:
    from a2a.client import Client

TIMEOUT = httpx.Timeout(30.0, connect=5.0)


class A2ARefused(ParleyError):
    """The agent answered with an A2A error: what it said, final."""

    code = "a2a_refused"


def card_json(card: AgentCard) -> str:
    return str(json_format.MessageToJson(card))


@functools.lru_cache(maxsize=64)
def card_of(text: str) -> AgentCard:
    """The card kept with a connection, read once per text (the task follower asks at every
    pass): callers only read it."""
    card = AgentCard()
    json_format.Parse(text, card, ignore_unknown_fields=True)
    return card


def role_of(skill_id: str) -> str:
    """A skill's id as a role's name: lowercase, other characters as hyphens."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", skill_id.lower())).strip("-")[:40]


def roles_of(card: AgentCard) -> dict[str, str]:
    """Our roles for the agent (``ROLE@CONNECTION``), each the id of one of its skills; an agent
    without skills is one role, its name's."""
    roles = {role_of(skill.id): skill.id for skill in card.skills if is_name(role_of(skill.id))}
    if not roles and is_name(role_of(card.name)):
        roles[role_of(card.name)] = ""
    return roles


class A2AAgents:
    def __init__(
        self, transport: httpx.AsyncBaseTransport | None = None, resolve: Resolver = resolved
    ) -> None:
        self._transport, self._resolve = transport, resolve
        self._clients: dict[tuple[int, str, str, bool], tuple[httpx.AsyncClient, Client]] = {}
        self._stale: list[tuple[httpx.AsyncClient, Client]] = []

    async def read_card(self, url: str, token: str | None) -> AgentCard:
        """The card at ``url`` (its base: the well-known path is added), each interface it names
        one Parley calls (``_check_interfaces``)."""
        from a2a.client import A2ACardResolver, A2AClientError

        async with self._http(token) as http:
            try:
                card = await A2ACardResolver(http, url).get_agent_card()
            except (A2AClientError, httpx.HTTPError, ValueError) as exc:
                raise Invalid(
                    f"no A2A agent card read at {url}: {redact(str(exc))[:300]}", field="url"
                ) from None
        await self._check_interfaces(url, card)
        return card

    async def _check_interfaces(self, url: str, card: AgentCard) -> None:
        """Invalid if the card names an interface on a host other than ``url``'s that resolves
        inside (or nowhere): refused when it is added, as each call to it would be."""
        given = [httpx.URL(url).raw_host.decode("ascii")]
        for interface in card.supported_interfaces:
            try:
                await checked_addresses(httpx.URL(interface.url), given, self._resolve)
            except (httpx.InvalidURL, InsideRefused, Unresolved) as refused:
                raise Invalid(
                    f"the card at {url} names {interface.url[:200]!r} for the agent: {refused};"
                    " Parley calls an inside address only at the URL an owner gives",
                    field="url",
                ) from None

    @asynccontextmanager
    async def calling(self, peer: PeerEndpoint, streaming: bool = False) -> AsyncIterator[Client]:
        """The agent's client (``streaming``: the one that subscribes to a task's stream; the
        other sends without waiting, even to an agent that streams); its failures in our tree."""
        from a2a.client import A2AClientError

        try:
            yield self._client(peer, streaming)
        except (A2AClientError, InsideRefused) as exc:
            refused = exc if isinstance(exc, InsideRefused) else exc.__cause__
            if isinstance(refused, InsideRefused):  # the card's word, not a blip: final
                raise A2ARefused(
                    f"{peer.name}'s card names a host Parley does not call: {refused}"
                ) from None
            raise Unavailable(f"{peer.name} did not answer: {redact(str(exc))[:300]}") from None
        except A2AError as exc:
            raise A2ARefused(f"{peer.name} refused: {redact(str(exc))[:300]}") from None
        except (httpx.HTTPError, OSError) as exc:
            said = str(exc) or type(exc).__name__
            raise Unavailable(f"cannot reach {peer.name}: {said}") from None

    async def close(self) -> None:
        for http, client in [*self._clients.values(), *self._stale]:
            await client.close()
            await http.aclose()
        self._clients.clear()
        self._stale.clear()

    def _client(self, peer: PeerEndpoint, streaming: bool) -> Client:
        from a2a.client import ClientConfig, ClientFactory

        key = (peer.connection_id, peer.card or "", peer.token, streaming)
        made = self._clients.get(key)
        if made is None:
            for old in [k for k in self._clients if k[0] == peer.connection_id and k != key]:
                if old[1:3] != key[1:3]:  # its card or token changed: closed when Parley stops
                    self._stale.append(self._clients.pop(old))
            # The card's interfaces are the agent's word: only the host the owner gave may be
            # inside (an agent on the owner's own network), not one the card alone names.
            given = httpx.URL(peer.url).raw_host.decode("ascii")
            http = httpx.AsyncClient(
                timeout=TIMEOUT,
                transport=self._transport,
                headers=_bearer(peer.token),
                verify=trusted(),
                event_hooks={"request": [Guard([given], self._resolve).pin]},
            )
            config = ClientConfig(streaming=streaming, httpx_client=http)
            made = (http, ClientFactory(config).create(card_of(peer.card or "{}")))
            self._clients[key] = made
        return made[1]

    @asynccontextmanager
    async def _http(self, token: str | None) -> AsyncIterator[httpx.AsyncClient]:
        async with httpx.AsyncClient(
            timeout=TIMEOUT, transport=self._transport, headers=_bearer(token), verify=trusted()
        ) as http:
            yield http


def _bearer(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
