"""/api/v1/act/…: what a running turn does, authorised by its run token (never a person's). One
route per action of the table, its body derived from it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import APIRouter, Depends, Request

from parley.actions.table import ACTIONS, Action
from parley.api.deps import Ctx
from parley.api.schemas.actions import REQUESTS, ActOut, TurnInputOut
from parley.api.schemas.base import Body
from parley.errors import Unauthorized
from parley.hub.local_actions import LocalActions
from parley.hub.turn_input import turn_input

router = APIRouter(tags=["actions"])


async def _run_actions(request: Request, ctx: Ctx) -> LocalActions:
    return LocalActions(ctx.store, ctx.clock, await _run_token(request), ctx.runtime.budget)


async def _run_token(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized(
            "a role token without a run has no topic: send 'Authorization: Bearer"
            " <PARLEY_RUN_TOKEN>' of a running turn"
        )
    return token.strip()


Acting = Annotated[LocalActions, Depends(_run_actions)]
RunToken = Annotated[str, Depends(_run_token)]


@router.get("/act/input")
async def act_input(token: RunToken, ctx: Ctx) -> TurnInputOut:
    """What this running turn answers: who said what, in which topic, under which root (with
    the run's own token, as the other acts)."""
    async with ctx.store.transaction() as tx:
        return TurnInputOut.of(await turn_input(tx, token))


def _endpoint(action: Action) -> Callable[..., Awaitable[ActOut]]:
    async def act(body: Body, acting: Acting) -> ActOut:
        return ActOut.of(await acting.acted(action.name, body.model_dump()))

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
        response_model_exclude_none=True,  # only the ids this action has
        name=_action.name,
        description=_action.help,
    )
