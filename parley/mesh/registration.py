"""Names owned: a node registers under a name only signed by the key of the credentials issued
for that name (``parley node add``), and the hub's own node's name is never taken from outside.
The broker checks who may publish where when it is configured for the mesh; this holds even on
one that authenticates nobody (``--insecure-broker``).

Why a signed timestamp and not a nonce the hub hands out: one request, on the subject the node's
credentials may publish to already, and nothing for the hub to keep per node. A registration is
good for ``FRESH_SECONDS`` either side of the hub's clock (machines of one mesh keep their
clocks by NTP), and the hub takes each signature once within that time: a copy replayed is
refused. (A hub started again forgets what it took; a copy replayed then re-registers the same
instance of the same node, with the same host, which gives its sender nothing.)"""

from __future__ import annotations

import time

from parley.node.keys import Wall, signed_by
from parley.node.messages import Register, RegisterReply
from parley.store import Store, Tx

FRESH_SECONDS = 120.0
HUB_OWN = "local"  # the hub's own node's name by default: never issued, never taken


class Registrations:
    """Whether a registration is the named node's own: the hub's side."""

    def __init__(
        self, store: Store, own_node: str | None, own_key: str | None, wall: Wall = time.time
    ) -> None:
        self._store = store
        self._own_node, self._own_key = own_node, own_key
        self._wall = wall
        self._taken: dict[str, float] = {}  # signatures taken → when they go stale

    async def refusal(self, subject_node: str, message: Register) -> RegisterReply | None:
        """Why ``message``, heard on the register subject of ``subject_node``, is not that
        node's own registration; None if it is."""
        name = message.node
        if name != subject_node:
            return _refused(f"node {name!r} registered on the subject of node {subject_node!r}")
        if name in (self._own_node, HUB_OWN):
            if message.public_key != self._own_key:
                reason = f"node {name!r} is the hub's own node; join under another name"
                return RegisterReply(accepted=False, reason=reason, taken=True)
        else:
            refused = await self._not_its_key(message)
            if refused is not None:
                return refused
        return self._unsigned(message)

    async def _not_its_key(self, message: Register) -> RegisterReply | None:
        name = message.node
        async with self._store.transaction() as tx:
            live = await tx.node_credentials.live(name)
        if live is None:
            return _refused(
                f"node {name!r} has no credentials on this hub; issue them there with"
                f" parley node add {name}"
            )
        if live.public_key != message.public_key:
            return _refused(
                f"not this node's credentials; issue new ones with parley node add {name} --replace"
            )
        return None

    def _unsigned(self, message: Register) -> RegisterReply | None:
        if not signed_by(message.public_key, message.signed_text(), message.signature):
            return _refused(
                "the registration is not signed by its credentials' key (forged, or altered"
                " on the way)"
            )
        now = self._wall()
        skew = abs(now - message.signed_at / 1000)
        if skew > FRESH_SECONDS:
            return _refused(
                f"the registration was signed {skew:.0f}s away from the hub's clock; set this"
                " machine's clock right (NTP) and join again"
            )
        self._taken = {sig: stale for sig, stale in self._taken.items() if stale > now}
        if message.signature in self._taken:
            return _refused("this registration was heard already (a copy replayed)")
        self._taken[message.signature] = now + 2 * FRESH_SECONDS
        return None

    async def may_beat(self, tx: Tx, node: str) -> bool:
        """Whether ``node``'s heartbeats are heard: the hub's own node, or one with live
        credentials (a removed node is silent for good, whatever it still sends)."""
        return node == self._own_node or await tx.node_credentials.live(node) is not None


def _refused(reason: str) -> RegisterReply:
    return RegisterReply(accepted=False, reason=reason)
