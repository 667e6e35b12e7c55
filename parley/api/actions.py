"""/api/v1/act/…: what a running turn does, authorised by its run token (never a person's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from parley.api.deps import Ctx
from parley.api.topic_schemas import (
    ActOut,
    AskNodeIn,
    CompleteIn,
    RememberIn,
    ReportIn,
    SendIn,
    SpawnIn,
)
from parley.errors import Unauthorized
from parley.runs.local_actions import LocalActions

router = APIRouter(tags=["actions"])


def _run_token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "a role token without a run has no topic: send 'Authorization: Bearer"
            " <PARLEY_RUN_TOKEN>' of a running turn"
        )
    return token.strip()


RunToken = Annotated[str, Depends(_run_token)]


@router.post("/act/send")
async def send(body: SendIn, token: RunToken, ctx: Ctx) -> ActOut:
    return ActOut(result=await LocalActions(ctx.runtime, token).send(body.to, body.text))


@router.post("/act/report")
async def report(body: ReportIn, token: RunToken, ctx: Ctx) -> ActOut:
    return ActOut(result=await LocalActions(ctx.runtime, token).report(body.text))


@router.post("/act/spawn")
async def spawn(body: SpawnIn, token: RunToken, ctx: Ctx) -> ActOut:
    actions = LocalActions(ctx.runtime, token)
    return ActOut(result=await actions.spawn(body.agent, body.text, body.thread))


@router.post("/act/complete")
async def complete(body: CompleteIn, token: RunToken, ctx: Ctx) -> ActOut:
    actions = LocalActions(ctx.runtime, token)
    return ActOut(result=await actions.complete(body.result, body.failed))


@router.post("/act/remember")
async def remember(body: RememberIn, token: RunToken, ctx: Ctx) -> ActOut:
    return ActOut(result=await LocalActions(ctx.runtime, token).remember(body.note))


@router.post("/act/ask-node")
async def ask_node(body: AskNodeIn, token: RunToken, ctx: Ctx) -> ActOut:
    return ActOut(result=await LocalActions(ctx.runtime, token).ask_node(body.node, body.text))
