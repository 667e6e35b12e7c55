"""Topics: conversations, tasks, agent conversations and node exchanges, with their text."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from pydantic import BaseModel, Field

from parley.api.schemas.base import NAME, Body, Page, capped, example, page_of
from parley.api.schemas.runs import RunOut
from parley.conversations.model import Message, Topic
from parley.hub.actions import describe
from parley.reads.model import RunDetail, TopicDetail, TopicView
from parley.runs.model import ToolCall
from parley.runs.queueing import Queued
from parley.text import MAX_TEXT


class TextIn(Body):
    model_config = example(text="hello")

    text: str = Field(min_length=1, json_schema_extra=capped(MAX_TEXT))


class TaskIn(Body):
    model_config = example(agent="clerk", text="count the spoons")

    agent: str = Field(json_schema_extra=NAME)
    text: str = Field(min_length=1, json_schema_extra=capped(MAX_TEXT))


class QueuedOut(BaseModel):
    model_config = example(topic_id=7, message_id=31, run_id=12)

    topic_id: int
    message_id: int
    run_id: int = Field(description="the run that takes this text; follow it at /runs/ID/events")

    @classmethod
    def of(cls, queued: Queued) -> QueuedOut:
        return cls(topic_id=queued.topic_id, message_id=queued.message_id, run_id=queued.run_id)


class MessageOut(BaseModel):
    id: int
    kind: str
    author: str
    recipient: str | None
    body: str
    run_id: int | None
    created_at: datetime
    cut_short: bool = Field(
        description="a reply that is what its turn had said when it was stopped, failed or"
        " interrupted, not a finished one"
    )

    @classmethod
    def of(cls, message: Message) -> MessageOut:
        return cls(
            id=message.id,
            kind=message.kind,
            author=message.author,
            recipient=message.recipient,
            body=message.body,
            run_id=message.run_id,
            created_at=message.created_at,
            cut_short=message.cut_short,
        )


class TopicOut(BaseModel):
    id: int
    kind: str
    agent: str = Field(
        description="the agent working on it; in an agent conversation, the role asked (a peer's"
        " as name@connection)"
    )
    addressed: str | None
    person: str | None
    text: str | None
    status: str
    result: str | None
    thread_id: str | None
    sender: str | None = Field(
        description="in an agent conversation, the role that started it (a peer's as"
        " name@connection), on both sides of a thread with a peer; else null"
    )
    root: str
    root_id: int
    created_at: datetime
    finished_at: datetime | None
    closed_at: datetime | None
    closed_reason: str | None
    a2a_context: str | None = Field(
        None,
        description="a conversation of an A2A client: the contextId it names it by (its texts'"
        " author is a2a:CLIENT)",
    )

    @classmethod
    def of(cls, topic: Topic, root: Topic | None = None) -> TopicOut:
        return cls(
            id=topic.id,
            kind=topic.kind.value,
            agent=topic.asked or topic.agent_name,
            addressed=topic.addressed_name,
            person=topic.person_name,
            text=topic.text,
            status=topic.status,
            result=topic.result,
            thread_id=topic.thread_id,
            sender=topic.started_by,
            root=describe(root) if root is not None else "gone",
            root_id=topic.root_id,
            created_at=topic.created_at,
            finished_at=topic.finished_at,
            closed_at=topic.closed_at,
            closed_reason=topic.closed_reason,
            a2a_context=topic.a2a_context,
        )

    @classmethod
    def of_view(cls, view: TopicView) -> TopicOut:
        return cls.of(view.topic, view.root)


class TaskGivenOut(TopicOut):
    run_id: int = Field(
        description="the run that takes the task's text; follow it at /runs/ID/events"
    )

    @classmethod
    def given(cls, view: TopicView, queued: Queued) -> TaskGivenOut:
        return cls(**TopicOut.of_view(view).model_dump(), run_id=queued.run_id)


class TopicDetailOut(BaseModel):
    """A topic with the first page (newest first) of each thing in it; each ``next`` continues
    on its own list: /topics/ID/messages, /runs?topic=ID, /tasks?parent=ID&deleted=true,
    /agent-conversations?root=ID&include_closed=true."""

    topic: TopicOut
    messages: Page[MessageOut]
    runs: Page[RunOut]
    subtasks: Page[TopicOut]
    agent_conversations: Page[TopicOut]

    @classmethod
    def of(cls, detail: TopicDetail) -> TopicDetailOut:
        return cls(
            topic=TopicOut.of_view(detail.view),
            messages=page_of(detail.messages, MessageOut.of),
            runs=page_of(detail.runs, RunOut.of),
            subtasks=page_of(detail.subtasks, TopicOut.of_view),
            agent_conversations=page_of(detail.agent_conversations, TopicOut.of_view),
        )


class ToolCallOut(BaseModel):
    """One tool call of the run's turn, in order."""

    seq: int = Field(description="its place among the run's calls, from 1")
    tool: str
    arguments: str = Field(description="as JSON; long texts shortened, secrets redacted")
    result_bytes: int = Field(description="the size of what the tool answered")
    duration_ms: int
    error: str | None = Field(description="why it was refused or failed; null when it worked")
    after_chars: int = Field(description="how much of the turn's output came before it")

    @classmethod
    def of(cls, call: ToolCall) -> ToolCallOut:
        return cls(**dataclasses.asdict(call))


class RunDetailOut(BaseModel):
    run: RunOut
    root: str
    topic: TopicOut
    input: list[MessageOut]
    stderr: str | None = Field(
        None,
        description=(
            "the last 64 KiB of what a command brain's process wrote on stderr, however the run"
            " ended (a cut tail says so on its first line); null for other brains"
        ),
        examples=["warning: no session id given, starting a new one\nError: quota exceeded"],
    )
    tool_calls: list[ToolCallOut] = Field([], description="each tool call of its turn, in order")

    @classmethod
    def of(cls, detail: RunDetail) -> RunDetailOut:
        shown = TopicOut.of_view(detail.view)
        return cls(
            run=RunOut.of(detail.run),
            root=shown.root,
            topic=shown,
            input=[MessageOut.of(message) for message in detail.input],
            stderr=detail.stderr,
            tool_calls=[ToolCallOut.of(call) for call in detail.tool_calls],
        )
