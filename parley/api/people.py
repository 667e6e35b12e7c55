"""/api/v1/people and /api/v1/me."""

from __future__ import annotations

from fastapi import APIRouter

from parley.api.deps import Caller, Ctx
from parley.api.paging import DEFAULT_LIMIT, Before, Limit
from parley.api.schemas.base import Page, page_of
from parley.api.schemas.people import NewPersonOut, PersonIn, PersonOut
from parley.people.accounts import add_person_by, reissue_token
from parley.reads.directory import people_page

router = APIRouter(tags=["people"])


@router.get("/me")
async def me(caller: Caller) -> PersonOut:
    """Who you are: the person behind the token."""
    return PersonOut.of(caller)


@router.post("/people", status_code=201)
async def create_person(body: PersonIn, caller: Caller, ctx: Ctx) -> NewPersonOut:
    """Add a person (owners); the answer holds their API token, shown only once."""
    async with ctx.store.transaction() as tx:
        created = await add_person_by(tx, ctx.clock, caller, body.name, body.role)
    return NewPersonOut(person=PersonOut.of(created.person), token=created.token)


@router.post("/people/{name}/token")
async def reissue(name: str, caller: Caller, ctx: Ctx) -> NewPersonOut:
    """A fresh token for a person (an owner, or the person themself); the old one stops working."""
    async with ctx.store.transaction() as tx:
        issued = await reissue_token(tx, name, caller)
    return NewPersonOut(person=PersonOut.of(issued.person), token=issued.token)


@router.get("/people")
async def list_people(
    caller: Caller, ctx: Ctx, limit: Limit = DEFAULT_LIMIT, before: Before = None
) -> Page[PersonOut]:
    """People by name."""
    async with ctx.store.transaction() as tx:
        found = await people_page(tx, limit, before)
    return page_of(found, PersonOut.of)
