"""Every tool call of a turn on the record: each call through the turn's Actions is noted, in
order (its tool, its arguments shortened and without secrets, the size of its result, how long
it took, why it was refused), reported as it ends and kept on the run with the turn's end. A
turn makes at most ``MAX_TOOL_CALLS``: past them a call is refused, and the model reads why."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping

from parley.brains.brain import Actions
from parley.errors import Conflict, ParleyError
from parley.node.messages import MAX_CALL_TEXT, MAX_TOOL_CALLS, ToolCallRecord
from parley.redact import redact

# A text argument longer than this is kept as its start and its length: a written file's whole
# content is the workspace's to keep, not the run's.
SHOWN_TEXT = 160

# Told of each call as it ends (the node reports it for whoever follows the run).
Told = Callable[[ToolCallRecord], Awaitable[None]]


class RecordedActions:
    def __init__(
        self,
        actions: Actions,
        told: Told,
        said_so_far: Callable[[], int],
        secrets: Iterable[str] = (),
        calls: list[ToolCallRecord] | None = None,
        deferred: Callable[[str], bool] = lambda _: False,
    ) -> None:
        self._actions, self._told, self._said_so_far = actions, told, said_so_far
        self._secrets = tuple(secrets)
        # An action a brain defers to its turn's end is no call made yet: it applies, or is
        # refused, with the end, which the run shows.
        self._deferred = deferred
        # Shared with whoever reports the turn's end, however it ends.
        self.calls: list[ToolCallRecord] = [] if calls is None else calls

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        if self._deferred(name):
            return await self._actions.act(name, arguments)
        if len(self.calls) >= MAX_TOOL_CALLS:
            raise Conflict(
                f"this turn has made {MAX_TOOL_CALLS} tool calls, the most a turn may: end the"
                " turn with what you have"
            )
        after, started = self._said_so_far(), time.monotonic()
        try:
            result = await self._actions.act(name, arguments)
        except ParleyError as refused:
            await self._note(name, arguments, after, started, error=refused.message)
            raise
        except asyncio.CancelledError:
            # Stopped while it ran: kept with the stopped turn's end, not told (the node stops).
            self.calls.append(self._record(name, arguments, after, started, 0, "stopped"))
            raise
        await self._note(name, arguments, after, started, result_bytes=len(result.encode()))
        return result

    async def _note(
        self,
        name: str,
        arguments: Mapping[str, object],
        after: int,
        started: float,
        result_bytes: int = 0,
        error: str | None = None,
    ) -> None:
        record = self._record(name, arguments, after, started, result_bytes, error)
        self.calls.append(record)
        await self._told(record)

    def _record(
        self,
        name: str,
        arguments: Mapping[str, object],
        after: int,
        started: float,
        result_bytes: int,
        error: str | None,
    ) -> ToolCallRecord:
        return ToolCallRecord(
            tool=name[:64],
            arguments=self._shown(shown_arguments(arguments)),
            result_bytes=result_bytes,
            duration_ms=round((time.monotonic() - started) * 1000),
            error=None if error is None else self._shown(error),
            after_chars=after,
        )

    def _shown(self, text: str) -> str:
        kept = redact(text, self._secrets)
        return kept if len(kept) <= MAX_CALL_TEXT else kept[: MAX_CALL_TEXT - 1] + "…"


def shown_arguments(arguments: Mapping[str, object]) -> str:
    """The arguments as JSON, each long text cut to its start and its length."""
    shown = {
        str(key): _shortened(value) if isinstance(value, str) else value
        for key, value in arguments.items()
    }
    return json.dumps(shown, ensure_ascii=False, default=repr)


def _shortened(text: str) -> str:
    if len(text) <= SHOWN_TEXT:
        return text
    return f"{text[:SHOWN_TEXT]}… ({len(text)} characters)"
