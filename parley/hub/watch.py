"""Watching a run as it happens, for `parley chat` and `parley say`: its start, the pieces of
its reply and its tool calls, then how it ended. A watcher who comes while the run is going
first gets those so far. In memory only; the store holds the result for anyone who comes later."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from parley.approvals.model import Approval
from parley.node.messages import ToolCallRecord
from parley.store.effects import Effects


@dataclass(frozen=True)
class WatchEvent:
    # "state" (it started), "chunk", "tool", "approval" (asked or decided), "refusal" (in its
    # root) or "end"
    kind: str
    # The chunk, the refusal's notice, the state it moved to, or a tool call's or approval's JSON
    text: str


class RunWatch:
    def __init__(self) -> None:
        self._queues: dict[int, set[asyncio.Queue[WatchEvent]]] = defaultdict(set)
        self._so_far: dict[int, list[WatchEvent]] = {}

    @contextmanager
    def watching(self, run_id: int) -> Iterator[asyncio.Queue[WatchEvent]]:
        queue: asyncio.Queue[WatchEvent] = asyncio.Queue()
        for event in self._so_far.get(run_id, ()):
            queue.put_nowait(event)
        self._queues[run_id].add(queue)
        try:
            yield queue
        finally:
            self._queues[run_id].discard(queue)
            if not self._queues[run_id]:
                del self._queues[run_id]

    async def on_commit(self, effects: Effects) -> None:
        for change in effects.changed:
            if change.is_end:
                self.end(change.run.id, change.state.value)
            else:
                self._put(change.run.id, WatchEvent("state", change.state.value))
        for approval in effects.approvals:
            self._so_far_and_now(approval.run_id, WatchEvent("approval", approval_json(approval)))

    def chunk(self, run_id: int, text: str) -> None:
        self._so_far_and_now(run_id, WatchEvent("chunk", text))

    def tool(self, run_id: int, call: ToolCallRecord) -> None:
        self._so_far_and_now(run_id, WatchEvent("tool", call.model_dump_json()))

    def _so_far_and_now(self, run_id: int, event: WatchEvent) -> None:
        self._so_far.setdefault(run_id, []).append(event)
        self._put(run_id, event)

    def end(self, run_id: int, state: str) -> None:
        self._so_far.pop(run_id, None)
        self._put(run_id, WatchEvent("end", state))

    def _put(self, run_id: int, event: WatchEvent) -> None:
        for queue in self._queues.get(run_id, ()):
            queue.put_nowait(event)


def approval_json(approval: Approval) -> str:
    """An approval as the run's events show it: what it asks, and how it stands."""
    return json.dumps(
        {
            "id": approval.id,
            "tool": approval.tool,
            "arguments": approval.arguments,
            "state": approval.state.value,
            "decided_by": approval.decided_by,
            "reason": approval.reason,
            "deadline": approval.deadline.isoformat(),
        }
    )
