"""The hub's side of the mesh: nodes register and send heartbeats across the broker; each join,
loss and return is logged once. A node registers under a name only with the credentials issued
for it (its signature by their key; ``registration.py``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from pydantic import ValidationError

from parley.broker.port import Broker, Delivered, Subscription
from parley.clock import Clock
from parley.errors import ParleyError
from parley.mesh.claims import Holder, NodeClaims
from parley.mesh.liveness import NodeBack, NodeLiveness, NodeLost, nothing_back, nothing_lost
from parley.mesh.nodes import register_node
from parley.mesh.registration import Registrations
from parley.node.messages import (
    HEARTBEAT,
    REGISTER,
    Heartbeat,
    Register,
    RegisterReply,
    TakenOver,
    heartbeat_subject,
    instance_subject,
    node_of,
    register_subject,
    taken_over_subject,
)
from parley.store import Store

log = logging.getLogger(__name__)

NodeReady = Callable[[str], Awaitable[None]]

# How long an instance whose node is taken over has to say it stopped taking its turns.
TAKE_OVER_TIMEOUT = 2.0
# How long the instance online under a name has to say it is still there.
STILL_THERE_TIMEOUT = 1.0


class MeshRegistry:
    def __init__(
        self,
        store: Store,
        broker: Broker,
        clock: Clock,
        on_node_ready: NodeReady,
        offline_after: timedelta,
        on_node_lost: NodeLost = nothing_lost,
        on_node_back: NodeBack = nothing_back,
        own_node: Holder | None = None,
        own_key: str | None = None,
    ) -> None:
        """``own_node``: the hub's own node, which registers signed by ``own_key`` (a key of
        the hub's life only): no other can take its name."""
        self._store = store
        self._broker = broker
        self._clock = clock
        self._offline_after = offline_after
        own_name = None if own_node is None else own_node.node
        self._registrations = Registrations(store, own_name, own_key)
        self._on_node_ready = on_node_ready
        self._on_node_lost = on_node_lost
        self._claims = NodeClaims(offline_after, own_node)

        def back(node: str) -> None:
            """A node heard again without registering (its connection came back): what waited
            for it goes on, as after a join (the workspaces of agents hired meanwhile)."""
            on_node_back(node)
            self._spawn(on_node_ready(node))

        self._liveness = NodeLiveness(store, clock, offline_after, on_node_lost, back)
        self._subscriptions: list[Subscription] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self._liveness.check()
        self._subscriptions = [
            await self._broker.subscribe_with_subject(REGISTER, self._on_register),
            await self._broker.subscribe_with_subject(HEARTBEAT, self._on_heartbeat),
        ]
        await self._liveness.start()

    async def stop(self) -> None:
        await self._liveness.stop()
        for subscription in self._subscriptions:
            await subscription.unsubscribe()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _on_register(self, message: Delivered) -> bytes:
        reply = await self._register(message.subject, message.data)
        return reply.model_dump_json().encode()

    async def _register(self, subject: str, data: bytes) -> RegisterReply:
        try:
            message = Register.model_validate_json(data)
        except ValidationError as exc:
            return RegisterReply(accepted=False, reason=f"malformed registration: {exc}")
        subject_node = node_of(subject, register_subject) or ""  # "": no node's, refused
        refused = await self._registrations.refusal(subject_node, message)
        if refused is not None:
            log.warning("node %r refused on %s: %s", message.node, subject, refused.reason)
            return refused
        refused = await self._claim(message)
        if refused is not None:
            return refused
        try:
            async with self._store.transaction() as tx:
                await register_node(
                    tx, self._clock, message.node, message.hostname, message.workspace_root
                )
        except ParleyError as exc:
            return RegisterReply(accepted=False, reason=exc.message)
        self._claims.hold(message)
        log.info(
            "node %s joined host=%s workspaces=%s",
            message.node,
            message.hostname,
            message.workspace_root,
        )
        self._liveness.joined(message.node)
        self._spawn(self._on_node_ready(message.node))
        return RegisterReply(accepted=True)

    async def _on_heartbeat(self, delivered: Delivered) -> None:
        subject, data = delivered.subject, delivered.data
        try:
            message = Heartbeat.model_validate_json(data)
        except ValidationError:
            log.warning("dropped a malformed heartbeat on %s", subject)
            return None
        if message.node != node_of(subject, heartbeat_subject):
            log.warning("dropped a heartbeat of node %r sent on %s", message.node, subject)
            return None
        if not self._claims.heard(message.node, message.instance):
            log.warning("heartbeat from a replaced instance of node %s: told to stop", message.node)
            await self._tell_stale(message.node)
            return None
        now = self._clock.now()
        async with self._store.transaction() as tx:
            if not await self._registrations.may_beat(tx, message.node):
                log.warning("dropped a heartbeat of node %r: it has no credentials", message.node)
                return None
            before = await tx.nodes.touch(message.node, now)
        if before is None:
            log.warning("heartbeat from unregistered node %r", message.node)
        else:
            self._liveness.heard(message.node, now - before)
        return None

    async def remove(self, node: str) -> None:
        """The node's credentials were revoked: it is gone now (its running turns are handled
        as a lost node's) until it registers again, with new credentials."""
        self._claims.release(node)
        self._liveness.gone(node)
        async with self._store.transaction() as tx:
            # Its status is derived from its last heartbeat: heard no later than the offline
            # time ago, it reads offline from now on.
            silent_since = self._clock.now() - self._offline_after - timedelta(seconds=1)
            known = await tx.nodes.heard_last(node, silent_since)
        if known:
            log.info("node %s removed: its credentials are revoked", node)
            await self._on_node_lost(node)

    async def _claim(self, message: Register) -> RegisterReply | None:
        """The node's name for ``message``'s instance, taken over from another if it comes to
        replace it; a refusal if another holds it."""
        async with self._store.transaction() as tx:
            known = await tx.nodes.by_name(message.node)
        refused = self._claims.refusal(message, known, self._clock.now())
        if refused is not None and not self._claims.owns(message.node):
            # Online by its last heartbeat; gone if its process no longer listens (killed and
            # started again at once, say): the newcomer then needs no --replace.
            refused = refused if await self._still_there(message.node) else None
        if refused is not None:
            log.warning("node %s refused to host=%s: %s", message.node, message.hostname, refused)
            return RegisterReply(accepted=False, reason=refused, taken=True)
        if self._claims.takes_over(message, known):
            await self._take_over(message)
        return None

    async def _still_there(self, node: str) -> bool:
        try:
            await self._broker.request(instance_subject(node), b"{}", STILL_THERE_TIMEOUT)
        except ParleyError as exc:
            log.info("node %s does not answer (%s): its name is free", node, exc.message)
            return False
        return True

    async def _take_over(self, message: Register) -> None:
        """Another instance had the name: it is told to stop being the node (it answers once it
        took its last turn), then the turns it ran fail as lost (their text waits for this
        one). One gone already, or hung, is not the node either way."""
        notice = TakenOver(instance=message.instance, hostname=message.hostname, pid=message.pid)
        subject = taken_over_subject(message.node)
        try:
            await self._broker.request(
                subject, notice.model_dump_json().encode(), TAKE_OVER_TIMEOUT
            )
        except ParleyError as exc:
            log.debug("node %s: the instance taken over did not answer: %s", message.node, exc)
        log.info(  # a newcomer with --replace, or the node's process started again
            "node %s passes to host=%s pid=%s", message.node, message.hostname, message.pid
        )
        await self._on_node_lost(message.node)

    async def _tell_stale(self, node: str) -> None:
        """An instance whose name was taken (while it was away, say) is told again."""
        holder = self._claims.holder(node)
        if holder is not None:
            notice = TakenOver(instance=holder.instance, hostname=holder.hostname, pid=holder.pid)
            await self._broker.publish(taken_over_subject(node), notice.model_dump_json().encode())

    def _spawn(self, work: Awaitable[None]) -> None:
        async def guarded() -> None:
            try:
                await work
            except Exception:
                log.exception("background work of the mesh registry failed")

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
