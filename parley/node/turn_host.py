"""A node's side of turns: start each turn's brain in a task of its own, report its events to
the hub, cancel it when the hub says stop. The node decides nothing; the hub owns every state."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from parley.actions.table import AGENT_TOOLS
from parley.brains.brain import Actions, Brain, OutsideTool, Said, Turn
from parley.brains.cache import BrainCache
from parley.brains.deferred import DeferredActions
from parley.brains.tail import Tail
from parley.broker.port import Broker, Subscription
from parley.errors import Invalid, ParleyError
from parley.node.messages import (
    ActionCall,
    HeldTurns,
    RunEvent,
    StopTurn,
    ToolCallRecord,
    TurnStart,
    held_subject,
    run_events_subject,
    run_outcomes_subject,
    stop_subject,
    turn_subject,
)
from parley.node.tool_calls import RecordedActions
from parley.node.workspace_acting import (
    Approvals,
    ToolsFor,
    WorkspaceActing,
    agent_variables,
    mcp_session,
)
from parley.redact import redact
from parley.tokens import hash_token
from parley.tools.mcp_servers import McpServers, McpServerSpec

log = logging.getLogger(__name__)

# A turn's Actions, from its run token and the hub's URL.
ActionsFor = Callable[[str, str], Actions]
# Where a turn's calls that ask first wait for a decision, from the same.
ApprovalsFor = Callable[[str, str], Approvals]


class TurnHost:
    def __init__(
        self,
        node: str,
        broker: Broker,
        brains: BrainCache,
        actions_for: ActionsFor,
        approvals_for: ApprovalsFor,
        tools_for: ToolsFor,
        mcp: McpServers,
    ) -> None:
        self._node, self._broker = node, broker
        self._brains, self._actions_for = brains, actions_for
        self._approvals_for = approvals_for
        self._tools_for, self._mcp = tools_for, mcp
        self._turns: dict[int, asyncio.Task[None]] = {}
        self._subscriptions: list[Subscription] = []
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._sweeper = asyncio.create_task(self._keep_swept())
        self._subscriptions = [
            await self._broker.subscribe(turn_subject(self._node), self._on_turn),
            await self._broker.subscribe(stop_subject(self._node), self._on_stop),
            await self._broker.subscribe(held_subject(self._node), self._on_held),
        ]

    async def stop(self) -> None:
        await self.leave()
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self._brains.close()
        await self._mcp.close()

    async def _keep_swept(self) -> None:
        """Idle brains' clients and MCP servers are closed, even on a quiet node."""
        async with asyncio.TaskGroup() as group:
            group.create_task(self._brains.keep_swept())
            group.create_task(self._mcp.keep_swept())

    async def leave(self) -> None:
        """Take no more turns and end those running (this process stops being the node)."""
        subscriptions, self._subscriptions = self._subscriptions, []
        for subscription in subscriptions:
            await subscription.unsubscribe()
        for task in list(self._turns.values()):
            task.cancel()
        await asyncio.gather(*self._turns.values(), return_exceptions=True)

    async def _on_turn(self, data: bytes) -> bytes:
        try:
            start = TurnStart.model_validate_json(data)
        except ValidationError as exc:
            raise Invalid(f"bad turn request: {exc}") from exc
        task = asyncio.create_task(self._run(start))
        self._turns[start.run_id] = task
        task.add_done_callback(lambda _: self._turns.pop(start.run_id, None))
        return b'{"accepted": true}'

    async def _on_held(self, data: bytes) -> bytes:
        return HeldTurns(run_ids=sorted(self._turns)).model_dump_json().encode()

    async def _on_stop(self, data: bytes) -> None:
        with contextlib.suppress(ValidationError):
            task = self._turns.get(StopTurn.model_validate_json(data).run_id)
            if task is not None:
                task.cancel()  # the brain ends its work (a command's process group is killed)

    async def _run(self, start: TurnStart) -> None:
        said = Tail("its output")  # what it streamed: kept on the run if the turn is cut short
        streamed = 0  # characters of it, to place each tool call in the text
        calls: list[ToolCallRecord] = []  # kept on the run however the turn ends

        async def stream(chunk: str) -> None:
            nonlocal streamed
            said.add(chunk.encode())
            streamed += len(chunk)
            await self._report(RunEvent(run_id=start.run_id, kind="chunk", text=chunk))

        async def told(call: ToolCallRecord) -> None:
            await self._report(RunEvent(run_id=start.run_id, kind="tool", tool_call=call))

        def recorded(actions: Actions, brain: Brain) -> RecordedActions:
            at_end = getattr(brain, "acts_at_end", False)
            return RecordedActions(
                actions,
                told,
                lambda: streamed,
                _secrets_of(start),
                calls,
                deferred=lambda name: at_end and name in AGENT_TOOLS,
            )

        started_as = hash_token(start.run_token)

        def ended(kind: Literal["failed", "stopped"], text: str = "") -> RunEvent:
            return RunEvent(
                run_id=start.run_id,
                kind=kind,
                text=text,
                stderr=turn.stderr.text(),
                said_so_far=said.text(),
                tool_calls=calls,
                run_token=start.run_token,
                started_as=started_as,
            )

        deferred = DeferredActions()
        turn = _turn(start)
        try:
            # Held for the turn alone, given back however it ends, before its end is reported.
            async with self._brains.lease(start.brain) as brain:
                turn = await self._with_outside_tools(turn, start)
                actions = recorded(self._actions(start, brain, deferred), brain)
                outcome = await brain.think(turn, actions, stream)
        except asyncio.CancelledError:
            await self._report_stopped(ended("stopped"))
            raise
        except ParleyError as exc:
            await self._report(ended("failed", exc.message))
        except Exception as exc:  # a brain's bug fails its turn, never the node
            text = redact(f"the brain failed: {exc!r}")
            # The traceback is for whoever fixes the brain; its last line may quote a key.
            trace = redact("".join(traceback.format_exception(exc)))
            log.error("run %s: the brain failed\n%s", start.run_id, trace)
            await self._report(ended("failed", text))
        else:
            event = RunEvent(
                run_id=start.run_id,
                kind="finished",
                text=outcome.reply,
                stderr=turn.stderr.text(),
                brain_session_id=outcome.brain_session_id,
                actions=[ActionCall(name=n, arguments=a) for n, a in deferred.calls],
                tool_calls=calls,
                run_token=start.run_token,
                started_as=started_as,
            )
            await self._report(event)

    def _actions(self, start: TurnStart, brain: Brain, deferred: DeferredActions) -> Actions:
        """Workspace tools act here, at once; Parley's actions at the hub (at the turn's end
        for a brain that acts then)."""
        hub: Actions = deferred
        if not getattr(brain, "acts_at_end", False):
            hub = self._actions_for(start.run_token, start.parley_url)
        approvals = self._approvals_for(start.run_token, start.parley_url)
        return WorkspaceActing(start, hub, self._tools_for, self._mcp, approvals)

    async def _with_outside_tools(self, turn: Turn, start: TurnStart) -> Turn:
        """The turn with its agent's MCP servers' tools, those servers started (or kept from
        the session's earlier turns); one that cannot start fails the turn, saying why."""
        if not start.mcp_servers:
            return turn
        if turn.workspace is None:
            raise Invalid(f"agent {start.agent} has no workspace yet: its MCP servers run in it")
        specs = [
            McpServerSpec(s.name, s.command, s.url, s.headers_from_env) for s in start.mcp_servers
        ]
        env = agent_variables(start, os.environ)
        listed = await self._mcp.tools(mcp_session(start), specs, turn.workspace, env)
        outside = tuple(
            OutsideTool(f"{tool.server}.{tool.name}", tool.description, tool.input_schema)
            for tool in listed
        )
        return dataclasses.replace(turn, outside_tools=outside)

    async def _report_stopped(self, event: RunEvent) -> None:
        """A stopped turn's stderr, what it had said so far and its tool calls, if any, are kept
        on the run.
        Best effort: the node may be shutting down, broker and all."""
        if event.stderr is None and event.said_so_far is None and not event.tool_calls:
            return
        try:
            await self._report(event)
        except Exception as exc:
            log.warning("run %s: how it was stopped could not be reported: %s", event.run_id, exc)

    async def _report(self, event: RunEvent) -> None:
        """A chunk goes out once; an end is stored by the broker before this returns (a node
        killed after that has still reported it)."""
        data = event.model_dump_json().encode()
        if not event.is_end:
            await self._broker.publish(run_events_subject(self._node), data)
            return
        outcomes = run_outcomes_subject(self._node)
        try:
            await self._broker.send_durable(outcomes, data, event.message_id)
        except Invalid as exc:  # too big for the broker, say: the turn still ends, failed
            failed = RunEvent(
                run_id=event.run_id,
                kind="failed",
                text=f"the node could not report this turn's end: {exc.message}",
                run_token=event.run_token,
                started_as=event.started_as,
            )
            data, message_id = failed.model_dump_json().encode(), f"{failed.message_id}-unsent"
            await self._broker.send_durable(outcomes, data, message_id)


def _secrets_of(start: TurnStart) -> list[str]:
    """What a call's record must not show: the agent's variables' values, its own and those
    this node's environment gives it."""
    given = [os.environ.get(name, "") for name in start.env_from_server]
    return [*start.env.values(), *given]


def _turn(start: TurnStart) -> Turn:
    return Turn(
        run_id=start.run_id,
        agent=start.agent,
        engram=start.engram,
        memory=start.memory,
        history=[Said(s.author, s.text, s.cut_short) for s in start.history],
        new_text=[Said(s.author, s.text) for s in start.new_text],
        root=start.root,
        counterpart=start.counterpart,
        was_stopped=start.was_stopped,
        brain_session_id=start.brain_session_id,
        workspace=Path(start.workspace) if start.workspace else None,
        run_token=start.run_token,
        parley_url=start.parley_url,
        tools=tuple(start.tools),
        env=dict(start.env),
        env_from_server=tuple(start.env_from_server),
    )
