"""A node's own process side: join the mesh, keep a heartbeat, make workspaces when asked, run
turns and check brains (with its TurnHost and BrainChecks), until stopped or taken over (another
process joined under its name with ``replace``)."""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from pathlib import Path

from pydantic import ValidationError

from parley.broker.port import Broker, Subscription
from parley.errors import Conflict, Invalid, ParleyError, Unauthorized
from parley.naming import check_name
from parley.node.brain_checks import BrainChecks
from parley.node.keys import NodeKey, signed_register
from parley.node.messages import (
    Heartbeat,
    InstanceReply,
    Provision,
    ProvisionReply,
    Register,
    RegisterReply,
    TakenOver,
    heartbeat_subject,
    instance_subject,
    provision_subject,
    register_subject,
    taken_over_subject,
)
from parley.node.turn_host import TurnHost
from parley.worker import Worker

log = logging.getLogger(__name__)

REGISTER_TIMEOUT = 10.0


def new_instance() -> str:
    """A name for one process's life as a node."""
    return secrets.token_hex(8)


class NodeRunner:
    def __init__(
        self,
        name: str,
        broker: Broker,
        key: NodeKey,
        workspace_root: Path,
        heartbeat_seconds: float,
        turns: TurnHost | None = None,
        checks: BrainChecks | None = None,
        instance: str | None = None,
        replace: bool = False,
    ) -> None:
        self.name = check_name("node", name)
        self.instance = instance or new_instance()
        self._replace = replace
        self._broker = broker
        self._key = key  # its credentials' key: it signs the registration with it
        self._workspace_root = workspace_root.resolve()
        self._heartbeat_seconds = heartbeat_seconds
        self._subscription: Subscription | None = None
        self._taken_over_subscription: Subscription | None = None
        self._instance_subscription: Subscription | None = None
        self._heartbeat: Heartbeats | None = None
        self._turns = turns
        self._checks = checks
        # Set once another process joined under this name with ``replace``: this one is not
        # the node any more (``taken_by`` says who is).
        self.taken_over = asyncio.Event()
        self.taken_by: TakenOver | None = None

    async def start(self) -> None:
        self._subscription = await self._broker.subscribe(
            provision_subject(self.name), self._on_provision
        )
        if self._turns is not None:
            await self._turns.start()
        if self._checks is not None:
            await self._checks.start()
        await self._register()
        # Only now: whoever listens on these is the node, to the hub (a newcomer is not yet).
        self._taken_over_subscription = await self._broker.subscribe(
            taken_over_subject(self.name), self._on_taken_over
        )
        self._instance_subscription = await self._broker.subscribe(
            instance_subject(self.name), self._on_instance
        )
        self._heartbeat = Heartbeats(
            self._broker, self.name, self.instance, self._heartbeat_seconds
        )
        await self._heartbeat.start()

    async def stop(self) -> None:
        await self._leave()
        if self._taken_over_subscription is not None:
            await self._taken_over_subscription.unsubscribe()
        if self._turns is not None:
            await self._turns.stop()

    async def _leave(self) -> None:
        """No more heartbeats, workspaces, brain checks or turns from this process."""
        heartbeat, self._heartbeat = self._heartbeat, None
        if heartbeat is not None:
            await heartbeat.stop()
        for subscription in (self._subscription, self._instance_subscription):
            if subscription is not None:
                await subscription.unsubscribe()
        self._subscription = self._instance_subscription = None
        if self._checks is not None:
            await self._checks.stop()
        if self._turns is not None:
            await self._turns.leave()

    async def _on_taken_over(self, data: bytes) -> bytes:
        """Another instance holds the name now: this one leaves (its turns end, to run again
        there) and then answers, so the hub sends nothing more its way meanwhile. Its own
        subscription here stays until ``stop``: it cannot end itself while it answers."""
        try:
            notice = TakenOver.model_validate_json(data)
        except ValidationError as exc:
            raise Invalid(f"bad take-over notice: {exc}") from exc
        if notice.instance == self.instance:
            return b"{}"
        await self._leave()
        log.warning("node %r taken over by host=%s pid=%s", self.name, notice.hostname, notice.pid)
        self.taken_by = notice
        self.taken_over.set()
        return b"{}"

    async def _on_instance(self, data: bytes) -> bytes:
        return InstanceReply(instance=self.instance).model_dump_json().encode()

    async def _register(self) -> None:
        message = Register(
            node=self.name,
            hostname=socket.gethostname(),
            workspace_root=str(self._workspace_root),
            instance=self.instance,
            pid=os.getpid(),
            replace=self._replace,
            public_key=self._key.public_key,
            signed_at=0,
        )
        signed = signed_register(self._key, message)
        raw = await self._broker.request(
            register_subject(self.name), signed.model_dump_json().encode(), REGISTER_TIMEOUT
        )
        reply = RegisterReply.model_validate_json(raw)
        if reply.taken:
            raise Conflict(f"the hub refused this join: {reply.reason}")
        if not reply.accepted:
            raise Unauthorized(f"the hub refused node {self.name!r}: {reply.reason}")
        log.debug("node %r joined the mesh", self.name)  # the hub logs the join at INFO

    async def _on_provision(self, data: bytes) -> bytes:
        try:
            agent = check_name("agent", Provision.model_validate_json(data).agent)
        except (ValidationError, Invalid) as exc:
            raise Invalid(f"bad provision request: {exc}") from exc
        workspace = self._workspace_root / agent
        workspace.mkdir(parents=True, exist_ok=True)
        return ProvisionReply(workspace=str(workspace)).model_dump_json().encode()


class Heartbeats(Worker):
    """Every ``seconds``, the node tells the hub it is alive; one that cannot be sent is
    logged and the next comes on time."""

    def __init__(self, broker: Broker, node: str, instance: str, seconds: float) -> None:
        super().__init__(f"heartbeats of node {node!r}", every=seconds, at_start=False, logger=log)
        self._broker, self._node = broker, node
        self._message = Heartbeat(node=node, instance=instance).model_dump_json().encode()

    async def one_pass(self) -> float | None:
        try:
            await self._broker.publish(heartbeat_subject(self._node), self._message)
        except ParleyError as exc:
            log.warning("heartbeat of node %r not sent: %s", self._node, exc)
        return None
