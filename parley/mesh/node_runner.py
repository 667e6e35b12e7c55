"""A node's own process side: join the mesh, keep a heartbeat, make workspaces when asked, run
turns and check brains (with its TurnHost and BrainChecks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from pathlib import Path

from pydantic import ValidationError

from parley.errors import Invalid, ParleyError, Unauthorized
from parley.mesh.brain_checks import BrainChecks
from parley.mesh.broker import Broker, Subscription
from parley.mesh.messages import (
    HEARTBEAT,
    REGISTER,
    Heartbeat,
    Provision,
    ProvisionReply,
    Register,
    RegisterReply,
    provision_subject,
)
from parley.mesh.turn_host import TurnHost
from parley.naming import check_name

log = logging.getLogger(__name__)

REGISTER_TIMEOUT = 10.0


class NodeRunner:
    def __init__(
        self,
        name: str,
        broker: Broker,
        join_token: str,
        workspace_root: Path,
        heartbeat_seconds: float,
        turns: TurnHost | None = None,
        checks: BrainChecks | None = None,
    ) -> None:
        self.name = check_name("node", name)
        self._broker = broker
        self._join_token = join_token
        self._workspace_root = workspace_root.resolve()
        self._heartbeat_seconds = heartbeat_seconds
        self._subscription: Subscription | None = None
        self._heartbeat: asyncio.Task[None] | None = None
        self._turns = turns
        self._checks = checks

    async def start(self) -> None:
        self._subscription = await self._broker.subscribe(
            provision_subject(self.name), self._on_provision
        )
        if self._turns is not None:
            await self._turns.start()
        if self._checks is not None:
            await self._checks.start()
        await self._register()
        self._heartbeat = asyncio.create_task(self._beat())

    async def stop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
        if self._subscription is not None:
            await self._subscription.unsubscribe()
        if self._checks is not None:
            await self._checks.stop()
        if self._turns is not None:
            await self._turns.stop()

    async def _register(self) -> None:
        message = Register(
            node=self.name,
            join_token=self._join_token,
            hostname=socket.gethostname(),
            workspace_root=str(self._workspace_root),
        )
        raw = await self._broker.request(
            REGISTER, message.model_dump_json().encode(), REGISTER_TIMEOUT
        )
        reply = RegisterReply.model_validate_json(raw)
        if not reply.accepted:
            raise Unauthorized(f"the hub refused node {self.name!r}: {reply.reason}")
        log.debug("node %r joined the mesh", self.name)  # the hub logs the join at INFO

    async def _beat(self) -> None:
        message = Heartbeat(node=self.name, join_token=self._join_token).model_dump_json().encode()
        while True:
            await asyncio.sleep(self._heartbeat_seconds)
            try:
                await self._broker.publish(HEARTBEAT, message)
            except ParleyError as exc:
                log.warning("heartbeat of node %r not sent: %s", self.name, exc)

    async def _on_provision(self, data: bytes) -> bytes:
        try:
            agent = check_name("agent", Provision.model_validate_json(data).agent)
        except (ValidationError, Invalid) as exc:
            raise Invalid(f"bad provision request: {exc}") from exc
        workspace = self._workspace_root / agent
        workspace.mkdir(parents=True, exist_ok=True)
        return ProvisionReply(workspace=str(workspace)).model_dump_json().encode()
