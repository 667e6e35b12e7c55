"""Runs: what a turn did, stopping it, a person's answer as a human agent."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.api.schemas.base import Body, capped, example
from parley.runs.model import Run
from parley.text import MAX_TEXT


class AnswerIn(Body):
    model_config = example(text="42 spoons, counted twice.", complete=True)

    text: str = Field(min_length=1, json_schema_extra=capped(MAX_TEXT))
    complete: bool = Field(False, description="also complete the task this turn works on")


class RunOut(BaseModel):
    id: int
    agent: str
    node: str
    topic_id: int
    state: str
    reason: str | None
    output: str | None = Field(
        description=(
            "the reply of a finished run; of a stopped, failed or interrupted one, what it had"
            " said so far (``cut_short``), or null if it said nothing that was kept"
        )
    )
    cut_short: bool = Field(
        description=(
            "``output`` is what the turn had said when it was stopped, failed or interrupted,"
            " not a finished reply (its last 64 KiB, keys and tokens redacted)"
        )
    )
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @classmethod
    def of(cls, run: Run) -> RunOut:
        return cls(
            id=run.id,
            agent=run.agent_name,
            node=run.node_name,
            topic_id=run.topic_id,
            state=run.state.value,
            reason=run.reason,
            output=run.output,
            cut_short=run.cut_short,
            created_at=run.created_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
        )


class StoppedOut(BaseModel):
    stopped: list[int] = Field(description="runs this request stopped; empty if none was open")
