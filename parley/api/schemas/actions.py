"""What a running turn may do, authorised by its run token: one request body per action of the
table (``parley.actions.table``), derived from it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from parley.actions.table import ACTIONS, Action
from parley.api.schemas.base import Body, capped, example
from parley.hub.actions import Acted
from parley.hub.turn_input import TurnInput


def _request(action: Action) -> type[Body]:
    fields: dict[str, Any] = {
        param.name: (
            param.kind.python_type,
            Field(
                ... if param.required else param.default,
                description=param.help,
                json_schema_extra=capped(param.max_length),
            ),
        )
        for param in action.params
    }
    name = "".join(part.title() for part in action.name.split("_")) + "In"
    model = create_model(name, __base__=Body, __doc__=action.help, **fields)
    model.model_config.update(example(**{param.name: param.example for param in action.params}))
    model.model_rebuild(force=True)  # the schema is made with the example
    return model


# The body of /act/<path> for each action, by the action's name.
REQUESTS: dict[str, type[Body]] = {name: _request(action) for name, action in ACTIONS.items()}


class ActOut(BaseModel):
    """What an action did, and the ids of what it made or reached (absent where none)."""

    result: str = Field(description="a short confirmation")
    topic_id: int | None = Field(None, description="the topic it posted or queued in")
    thread_id: str | None = Field(None, description="a send's agent conversation")
    task_id: int | None = Field(None, description="the subtask spawned, or the task completed")
    run_id: int | None = Field(None, description="the run that will read what was sent or asked")

    @classmethod
    def of(cls, acted: Acted) -> ActOut:
        return cls(
            result=acted.result,
            topic_id=acted.topic_id,
            thread_id=acted.thread_id,
            task_id=acted.task_id,
            run_id=acted.run_id,
        )


class SaidOut(BaseModel):
    author: str = Field(description="who said it: a person's or an agent's name")
    text: str
    kind: str = Field(description="text, reply, report, notice, …")
    message_id: int


class TurnInputOut(BaseModel):
    """What a running turn answers (``parley act input``)."""

    run_id: int
    agent: str
    topic_kind: str = Field(description="conversation, task, agent_conversation or node")
    topic_id: int
    topic: str = Field(description="the topic in words")
    thread_id: str | None = Field(description="in an agent conversation, its thread ID")
    counterpart: str | None = Field(
        description="in an agent conversation, the other agent: the reply is sent to it"
    )
    root_id: int
    root: str = Field(description="what this work answers for, in words")
    said: list[SaidOut] = Field(description="the new text of this turn, oldest first")

    @classmethod
    def of(cls, given: TurnInput) -> TurnInputOut:
        topic = given.topic
        return cls(
            run_id=given.run.id,
            agent=given.run.agent_name,
            topic_kind=topic.kind.value,
            topic_id=topic.id,
            topic=given.topic_in_words,
            thread_id=topic.thread_id,
            counterpart=given.counterpart,
            root_id=topic.root_id,
            root=given.root_in_words,
            said=[
                SaidOut(author=m.author, text=m.body, kind=m.kind, message_id=m.id)
                for m in given.said
            ],
        )
