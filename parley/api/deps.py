"""Request dependencies: the running context and the person behind the bearer token."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from parley.context import Context
from parley.errors import Unauthorized, Unavailable
from parley.people.accounts import authenticate
from parley.people.model import Person


def get_context(request: Request) -> Context:
    context = getattr(request.app.state, "context", None)
    if context is None:
        raise Unavailable("Parley is still starting")
    assert isinstance(context, Context)
    return context


async def current_person(
    request: Request, context: Annotated[Context, Depends(get_context)]
) -> Person:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if header and scheme.lower() != "bearer":
        raise Unauthorized("the Authorization header must be 'Bearer <token>'")
    return await authenticate(context.store, token.strip() or None)


Ctx = Annotated[Context, Depends(get_context)]
Caller = Annotated[Person, Depends(current_person)]
