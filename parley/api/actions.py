"""/api/v1/act/…: what a running turn does, authorised by its run token (never a person's)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from parley.api.deps import Ctx
from parley.api.schemas.actions import (
    ActOut,
    AskNodeIn,
    CompleteIn,
    RememberIn,
    ReportIn,
    SendIn,
    SpawnIn,
)
from parley.errors import Unauthorized
from parley.hub.local_actions import LocalActions

router = APIRouter(tags=["actions"])


def _run_actions(request: Request, ctx: Ctx) -> LocalActions:
    return LocalActions(ctx.store, ctx.clock, _run_token(request))


def _run_token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "a role token without a run has no topic: send 'Authorization: Bearer"
            " <PARLEY_RUN_TOKEN>' of a running turn"
        )
    return token.strip()


Acting = Annotated[LocalActions, Depends(_run_actions)]


@router.post("/act/send")
async def send(body: SendIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.send(body.to, body.text))


@router.post("/act/report")
async def report(body: ReportIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.report(body.text))


@router.post("/act/spawn")
async def spawn(body: SpawnIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.spawn(body.agent, body.text, body.thread))


@router.post("/act/complete")
async def complete(body: CompleteIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.complete(body.result, body.failed))


@router.post("/act/remember")
async def remember(body: RememberIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.remember(body.note))


@router.post("/act/ask-node")
async def ask_node(body: AskNodeIn, acting: Acting) -> ActOut:
    return ActOut(result=await acting.ask_node(body.node, body.text))
