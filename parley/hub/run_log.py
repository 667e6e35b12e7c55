"""The operator's log of runs: one INFO line per start, finish, failure and stop, in key=value
form that greps well, written once the transaction that made the change has committed (a
batch rolled back logs nothing):

    run 42 started agent=scribe node=local topic=conversation:7 state=running waited=0.012s
    run 42 failed agent=scribe node=local topic=task:9 state=failed duration=1.2s reason="…"
"""

from __future__ import annotations

import json
import logging
from datetime import datetime

from parley.runs.model import RunChange, RunState
from parley.store.effects import Effects

log = logging.getLogger(__name__)

# A provider's error can be a whole page; the run itself keeps all of it.
REASON_LOGGED = 500


async def log_run_changes(effects: Effects) -> None:
    # Checked once per commit: at the hub's rate, lines nobody keeps must cost nothing.
    if not effects.changed or not log.isEnabledFor(logging.INFO):
        return
    for change in effects.changed:
        _log(change)


def _log(change: RunChange) -> None:
    run = change.run
    if change.state is RunState.RUNNING:
        log.info(
            "run %d started agent=%s node=%s topic=%s state=running waited=%s",
            run.id,
            run.agent_name,
            run.node_name,
            run.topic,
            _seconds(run.created_at, change.at),
        )
        return
    log.info(
        "run %d %s agent=%s node=%s topic=%s state=%s duration=%s%s",
        run.id,
        change.state.value,
        run.agent_name,
        run.node_name,
        run.topic,
        change.state.value,
        _seconds(run.started_at, change.at),
        _reason(change.reason),
    )


def _seconds(start: datetime | None, end: datetime) -> str:
    if start is None:
        return "-"  # stopped before it started
    return f"{(end - start).total_seconds():.3f}s"


def _reason(reason: str | None) -> str:
    if not reason:
        return ""
    if len(reason) > REASON_LOGGED:
        reason = reason[:REASON_LOGGED] + "…"
    # Quoted as JSON: one line whatever the reason holds, and its end is unambiguous.
    return " reason=" + json.dumps(reason, ensure_ascii=False)
