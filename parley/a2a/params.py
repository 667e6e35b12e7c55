"""What an A2A call's parameters say, read and checked before anything is queued or read: the
message's text, its context against its task's, a task's number, a page's place, a history's
length, a push config's fields and the id a send gives one without."""

from __future__ import annotations

import hashlib
from typing import Any

from a2a.types.a2a_pb2 import Message, TaskPushNotificationConfig
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError

from parley.a2a.tasks import task_id
from parley.store.a2a_tasks import TaskRow

MAX_CONFIG_ID = 64  # the column's
MAX_SECRET = 4096


def text_of(message: Message) -> str:
    if not message.parts:
        raise InvalidParamsError(message="the message has no parts: send one text part")
    texts = []
    for part in message.parts:
        if part.WhichOneof("content") != "text":
            raise ContentTypeNotSupportedError(
                message="Parley's agents read text parts only (text/plain)"
            )
        texts.append(part.text)
    return "\n".join(texts)


def check_context_of(message: Message, task: TaskRow) -> None:
    if message.context_id and message.context_id != task.context:
        raise InvalidParamsError(
            message=f"task {task_id(task)} is in context {task.context}, not {message.context_id}"
        )


def task_number(given: str) -> int | None:
    if not given.isdigit() or len(given) > 18:
        return None
    return int(given)


def history_length(params: Any) -> int | None:
    """The request's ``historyLength`` (None: not given; 0: no history); negative is refused."""
    if not params.HasField("history_length"):
        return None
    if params.history_length < 0:
        raise InvalidParamsError(message=f"historyLength: 0 or more, not {params.history_length}")
    return int(params.history_length)


def page_offset(token: str) -> int:
    """A page token we gave: the place of the page's first task."""
    if not token:
        return 0
    if not token.isdigit() or len(token) > 9:
        raise InvalidParamsError(message=f"pageToken {token[:40]!r} is not one we gave")
    return int(token)


def check_push_fields(given: TaskPushNotificationConfig) -> None:
    """A push config's id and secrets, within what the store keeps (its URL is checked apart:
    that takes a lookup of its host)."""
    if len(given.id) > MAX_CONFIG_ID or "\x00" in given.id:
        raise InvalidParamsError(message=f"id: at most {MAX_CONFIG_ID} characters, no NUL")
    if len(given.token) > MAX_SECRET or len(given.authentication.credentials) > MAX_SECRET:
        raise InvalidParamsError(message=f"token, credentials: at most {MAX_SECRET} characters")


def push_id_of(message_id: str) -> str:
    """A push config's id when a send sets one without: the message's own, hashed to fit
    (empty: the message has none, and the config a new id)."""
    if not message_id:
        return ""
    return "sent-" + hashlib.sha256(message_id.encode()).hexdigest()[:32]
