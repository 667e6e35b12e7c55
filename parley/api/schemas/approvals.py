"""Approvals: a tool call waiting for a person's yes or no, and the decision."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from parley.api.schemas.base import Body, capped, example
from parley.approvals.model import Approval
from parley.text import MAX_REASON

ARGUMENTS_HELP = "the call's arguments, exactly as it would act with them"


class ApprovalOut(BaseModel):
    id: int
    run_id: int = Field(description="the turn that waits (stop it: POST /runs/{run_id}/stop)")
    agent: str
    node: str
    topic_id: int
    tool: str = Field(description="a workspace tool, or SERVER.tool of an MCP server")
    arguments: dict[str, Any] = Field(description=ARGUMENTS_HELP)
    state: str = Field(description="waiting, approved or denied")
    asked_at: datetime
    deadline: datetime = Field(description="unanswered by then, it is denied")
    decided_at: datetime | None
    decided_by: str | None = Field(description="who decided; null: waiting, or nobody in time")
    reason: str | None = Field(description="why it was denied, if anyone said")
    run_state: str = Field(
        description="its turn's state: a waiting approval of an ended turn waits for nothing"
    )

    @classmethod
    def of(cls, approval: Approval) -> ApprovalOut:
        return cls(
            id=approval.id,
            run_id=approval.run_id,
            agent=approval.agent_name,
            node=approval.node_name,
            topic_id=approval.topic_id,
            tool=approval.tool,
            arguments=json.loads(approval.arguments),
            state=approval.state.value,
            asked_at=approval.asked_at,
            deadline=approval.deadline,
            decided_at=approval.decided_at,
            decided_by=approval.decided_by,
            reason=approval.reason,
            run_state=approval.run_state,
        )


class DenyIn(Body):
    model_config = example(reason="not on the production database")

    reason: str | None = Field(
        None,
        description="why, for the model to read with the denial",
        json_schema_extra=capped(MAX_REASON),
    )


class AskIn(Body):
    """A running turn asks before a call (its node does, with the run's token)."""

    model_config = example(tool="run", arguments={"command": "make test"})

    tool: str = Field(json_schema_extra=capped(200, 1))
    arguments: dict[str, Any] = Field(description=ARGUMENTS_HELP)


class AskedOut(BaseModel):
    """How a call that asked first stands, for the turn that waits."""

    approval: ApprovalOut
    result: str | None = Field(
        description="once decided: null, it may act; else the words the model reads instead"
    )

    @classmethod
    def of(cls, approval: Approval) -> AskedOut:
        result = None if approval.is_open else approval.as_tool_result()
        return cls(approval=ApprovalOut.of(approval), result=result)
