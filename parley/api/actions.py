"""/api/v1/act/…: what a running turn does, authorised by its run token (never a person's). One
route per action of the table, its body derived from it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request

from parley.actions.table import ACTIONS, Action
from parley.api.deps import Ctx
from parley.api.schemas.actions import REQUESTS, ActOut
from parley.api.schemas.base import Body
from parley.errors import Unauthorized
from parley.hub.local_actions import LocalActions

router = APIRouter(tags=["actions"])


def _run_actions(request: Request, ctx: Ctx) -> LocalActions:
    return LocalActions(ctx.store, ctx.clock, _run_token(request), ctx.runtime.budget)


def _run_token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "a role token without a run has no topic: send 'Authorization: Bearer"
            " <PARLEY_RUN_TOKEN>' of a running turn"
        )
    return token.strip()


Acting = Annotated[LocalActions, Depends(_run_actions)]


def _endpoint(action: Action) -> Callable[..., Awaitable[ActOut]]:
    async def act(body: Body, acting: Acting) -> ActOut:
        return ActOut(result=await acting.act(action.name, body.model_dump()))

    # FastAPI reads the body's model from the signature: this action's, from the table.
    signature = inspect.signature(act, eval_str=True)
    body = signature.parameters["body"].replace(annotation=REQUESTS[action.name])
    act.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[body, signature.parameters["acting"]]
    )
    return act


for _action in ACTIONS.values():
    router.add_api_route(
        f"/act/{_action.path}",
        _endpoint(_action),
        methods=["POST"],
        name=_action.name,
        summary=_action.help,
    )
