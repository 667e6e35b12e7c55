"""Nodes' broker credentials, issued by the hub's owner (``parley node add``) and revoked
(``parley node add --replace``, ``parley node remove``). Only each name's public key is kept:
the ``.creds`` text is answered once. A revocation is recorded in the store, and told to the
broker (the whole list, every time) when the hub runs on one it configured."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from parley.clock import Clock
from parley.datafolder import DataFolder
from parley.errors import Conflict, NotFound
from parley.mesh.broker_auth import BrokerKeys, IssuedNode, push_revocations
from parley.mesh.model import NodeCredential
from parley.mesh.registration import HUB_OWN
from parley.naming import check_name
from parley.settings import Settings
from parley.store import Store

# Tells the broker every revoked key (public key → unix seconds revoked).
Revoker = Callable[[Mapping[str, int]], Awaitable[None]]

NO_KEYS = (
    "the hub has no broker keys yet: run `parley mesh broker-config --out DIR` on the hub's"
    " machine first (it makes them), then issue the node's credentials"
)


def broker_revoker(settings: Settings) -> Revoker | None:
    """How revocations reach the broker: on one configured for the mesh (with the keys of
    ``parley mesh broker-config``); none in process, nor on an ``--insecure-broker``, which
    authenticates nobody (there, only the store's record keeps a revoked node out)."""
    url = settings.broker
    keys = BrokerKeys.load(DataFolder(settings.data_dir))
    if url is None or settings.insecure_broker or keys is None:
        return None

    async def revoke(revoked: Mapping[str, int]) -> None:
        await push_revocations(url, keys, revoked)

    return revoke


def check_issuable(name: str, own_node: str) -> str:
    """A node name credentials may be issued or revoked for: not the hub's own."""
    check_name("node", name)
    if name in (HUB_OWN, own_node):
        raise Conflict(
            f"node {name!r} is the hub's own node: it needs no credentials and none are ever"
            " issued for it; give the other machine another name"
        )
    return name


async def issue_credentials(
    store: Store,
    clock: Clock,
    keys: BrokerKeys | None,
    own_node: str,
    name: str,
    replace: bool,
    revoker: Revoker | None,
) -> tuple[NodeCredential, IssuedNode]:
    """New credentials for ``name`` (as kept, and as issued: the .creds text is only here);
    with ``replace``, its live ones are revoked first."""
    check_issuable(name, own_node)
    if keys is None:
        raise Conflict(NO_KEYS)
    if replace:
        await _revoke(store, clock, name, revoker)
    async with store.transaction() as tx:
        live = await tx.node_credentials.live(name)
        if live is not None:
            raise Conflict(
                f"node {name!r} has credentials already (issued {live.issued_at:%Y-%m-%d %H:%M}"
                f" UTC); to revoke them and issue new ones: parley node add {name} --replace"
            )
        issued = keys.issue_node(name)
        kept = await tx.node_credentials.add(name, issued.public_key, clock.now())
    return kept, issued


async def revoke_credentials(
    store: Store, clock: Clock, own_node: str, name: str, revoker: Revoker | None
) -> NodeCredential:
    """Revoke the name's live credentials (NotFound: it has none); the name is free again."""
    check_issuable(name, own_node)
    revoked = await _revoke(store, clock, name, revoker)
    if revoked is None:
        raise NotFound(f"node {name!r} has no credentials to revoke", field="node")
    return revoked


async def _revoke(
    store: Store, clock: Clock, name: str, revoker: Revoker | None
) -> NodeCredential | None:
    """Recorded in the store first (a key revoked there can no longer register), then the
    broker is told every revoked key — also when none was live here: a try that reached the
    store but not the broker is completed by the next."""
    async with store.transaction() as tx:
        revoked = await tx.node_credentials.revoke(name, clock.now())
    await tell_broker(store, revoker)
    return revoked


async def tell_broker(store: Store, revoker: Revoker | None) -> None:
    """Give the broker every revoked key (the account's list is rebuilt whole each time)."""
    if revoker is None:
        return
    async with store.transaction() as tx:
        revoked = await tx.node_credentials.revoked()
    await revoker(revocation_list(revoked))


def revocation_list(revoked: list[NodeCredential]) -> dict[str, int]:
    return {c.public_key: int(c.revoked_at.timestamp()) for c in revoked if c.revoked_at}
