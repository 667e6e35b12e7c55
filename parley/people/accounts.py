"""Adding people, knowing who a token belongs to, and what only owners may do."""

from __future__ import annotations

from dataclasses import dataclass

from parley.clock import Clock
from parley.errors import Conflict, Forbidden, NotFound, Unauthorized
from parley.naming import check_name
from parley.people.model import Person, Role
from parley.store import Store, Tx
from parley.tokens import hash_token, new_token


@dataclass(frozen=True)
class NewPerson:
    person: Person
    token: str


def require_owner(person: Person, action: str) -> None:
    if not person.is_owner:
        raise Forbidden(f"only an owner may {action}; {person.name} is a {person.role.value}")


async def add_person(tx: Tx, clock: Clock, name: str, role: Role) -> NewPerson:
    check_name("person", name)
    if await tx.people.by_name(name) is not None:
        raise Conflict(f"a person named {name!r} already exists")
    token = new_token()
    person = await tx.people.add(name, role, hash_token(token), clock.now())
    return NewPerson(person, token)


async def add_person_by(tx: Tx, clock: Clock, by: Person, name: str, role: Role) -> NewPerson:
    """A person added by someone: owners only (the first owner is made at start, by no one)."""
    require_owner(by, "add people")
    return await add_person(tx, clock, name, role)


async def reissue_token(tx: Tx, name: str, by: Person) -> NewPerson:
    """A new token for ``name``; the old one stops working at once, and every sign-in to the
    page made with it ends. Owners, or the person."""
    if by.name != name:
        require_owner(by, "issue another person's token")
    person = await person_by_name(tx, name)
    token = new_token()
    await tx.people.replace_token_hash(person.id, hash_token(token))
    await tx.sign_ins.end_all(person.id)
    return NewPerson(person, token)


async def authenticate(store: Store, token: str | None) -> Person:
    if not token:
        raise Unauthorized("no API token: send 'Authorization: Bearer <token>'")
    async with store.single_read() as tx:
        person = await tx.people.by_token_hash(hash_token(token))
    if person is None:
        raise Unauthorized("this API token is not known here")
    return person


async def person_by_name(tx: Tx, name: str) -> Person:
    person = await tx.people.by_name(name)
    if person is None:
        raise NotFound(f"no person named {name!r}")
    return person
