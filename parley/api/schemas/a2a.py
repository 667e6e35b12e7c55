"""A2A clients and exposed agents, as owners manage them (a client's token only once, at its
adding)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from parley.a2a.edge import CARD_PATH, agent_url
from parley.a2a.model import A2AClient, Exposed, NewA2AClient
from parley.api.schemas.base import NAME, Body, example


class A2AClientIn(Body):
    model_config = example(name="planner")

    name: str = Field(json_schema_extra=NAME, description="what this side calls the client")


class A2AClientOut(BaseModel):
    name: str
    created_by: str = Field(description="the owner who let it in: its contexts are theirs here")
    created_at: datetime
    removed_at: datetime | None = Field(description="when its token stopped working")

    @classmethod
    def of(cls, client: A2AClient) -> A2AClientOut:
        return cls(
            name=client.name,
            created_by=client.created_by,
            created_at=client.created_at,
            removed_at=client.removed_at,
        )


class NewA2AClientOut(A2AClientOut):
    token: str = Field(description="give it to the client, as its bearer token; shown this once")

    @classmethod
    def made(cls, new: NewA2AClient) -> NewA2AClientOut:
        return cls(**A2AClientOut.of(new.client).model_dump(), token=new.token)


class ExposeA2AIn(Body):
    model_config = example(agent="scribe")

    agent: str = Field(min_length=1, max_length=64)


class ExposedOut(BaseModel):
    agent: str
    card_url: str = Field(description="where A2A clients read its card")
    url: str = Field(description="its JSON-RPC endpoint (HTTP+JSON: under /rest)")
    exposed_at: datetime

    @classmethod
    def of(cls, exposed: Exposed, base_url: str) -> ExposedOut:
        url = agent_url(base_url, exposed.name)
        return cls(
            agent=exposed.name, card_url=url + CARD_PATH, url=url, exposed_at=exposed.exposed_at
        )
