"""The tool calls of runs, in order: kept once with a turn's end, read where a run is shown."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import exists, insert, select

from parley.runs.model import ToolCall
from parley.store.connection import Connection
from parley.store.tables import tool_calls

_OF_RUN = select(tool_calls).order_by(tool_calls.c.seq)


def _call(row: Any) -> ToolCall:
    return ToolCall(
        seq=row.seq,
        tool=row.tool,
        arguments=row.arguments,
        result_bytes=row.result_bytes,
        duration_ms=row.duration_ms,
        error=row.error,
        after_chars=row.after_chars,
    )


class ToolCallsRepo:
    def __init__(self, connection: Connection) -> None:
        self._c = connection

    async def keep(self, run_id: int, calls: Sequence[ToolCall]) -> bool:
        """Keep a turn's calls on its run, unless it has some already (a start of the run
        that was cut short kept its own); False then."""
        if not calls:
            return False
        held = select(exists().where(tool_calls.c.run_id == run_id))
        if (await self._c.execute(held)).scalar():
            return False
        rows = [{"run_id": run_id, **_row(call)} for call in calls]
        await self._c.execute(insert(tool_calls), rows)
        return True

    async def of_run(self, run_id: int) -> list[ToolCall]:
        found = await self._c.execute(_OF_RUN.where(tool_calls.c.run_id == run_id))
        return [_call(row) for row in found]


def _row(call: ToolCall) -> dict[str, Any]:
    return {
        "seq": call.seq,
        "tool": call.tool,
        "arguments": call.arguments,
        "result_bytes": call.result_bytes,
        "duration_ms": call.duration_ms,
        "error": call.error,
        "after_chars": call.after_chars,
    }
