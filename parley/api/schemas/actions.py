"""What a running turn may do, authorised by its run token."""

from __future__ import annotations

from pydantic import BaseModel

from parley.api.schemas.base import Body


class SendIn(Body):
    to: str
    text: str


class ReportIn(Body):
    text: str


class SpawnIn(Body):
    agent: str
    text: str
    thread: bool = False


class CompleteIn(Body):
    result: str
    failed: bool = False


class RememberIn(Body):
    note: str


class AskNodeIn(Body):
    node: str
    text: str


class ActOut(BaseModel):
    result: str
