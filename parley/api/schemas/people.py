"""People: adding them and what is shown of them."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.api.schemas.base import NAME, Body, example
from parley.people.model import Person, Role


class PersonIn(Body):
    model_config = example(name="ada", role="member")

    name: str = Field(json_schema_extra=NAME)
    role: Role = Role.MEMBER


class PersonOut(BaseModel):
    name: str
    role: Role
    created_at: datetime

    @classmethod
    def of(cls, person: Person) -> PersonOut:
        return cls(name=person.name, role=person.role, created_at=person.created_at)


class NewPersonOut(BaseModel):
    person: PersonOut
    token: str = Field(description="shown once; only its hash is stored")
