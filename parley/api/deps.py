"""Request dependencies: the running context and the person behind the bearer token."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from parley.context import Context
from parley.errors import Unauthorized, Unavailable
from parley.people.model import Person
from parley.text import refuse_nul


# Every dependency is a coroutine: FastAPI runs a plain ``def`` one on a worker thread, which
# under load waits for the loop to let go of the GIL (tests/api/test_dependencies_async.py).
async def get_context(request: Request) -> Context:
    context = getattr(request.app.state, "context", None)
    if context is None:
        raise Unavailable("Parley is still starting")
    assert isinstance(context, Context)
    return context


async def current_person(request: Request) -> Person:
    """Who the Authenticate guard found behind the bearer token (before the body was read)."""
    person = getattr(request.state, "person", None)
    if not isinstance(person, Person):
        raise Unauthorized("this route needs a person's token")
    return person


Ctx = Annotated[Context, Depends(get_context)]
Caller = Annotated[Person, Depends(current_person)]


async def refuse_nul_in_url(request: Request) -> None:
    """Path and query parameters follow the same rule as bodies: no NUL byte (parley/text.py)."""
    for name, value in request.path_params.items():
        if isinstance(value, str):
            refuse_nul(value, name)
    for name, value in request.query_params.multi_items():
        refuse_nul(name, "a query parameter's name")
        refuse_nul(value, name)
