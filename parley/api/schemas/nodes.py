"""Nodes of the mesh as the API shows them."""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from parley.api.schemas.base import Body, capped, example
from parley.mesh.model import Node, Workload
from parley.text import MAX_ENGRAM


class EngramIn(Body):
    model_config = example(engram="Patient, precise, a little dry.")

    engram: str = Field(json_schema_extra=capped(MAX_ENGRAM))


class NodeOut(BaseModel):
    name: str
    status: str
    last_seen_at: datetime
    hostname: str
    engram: str
    joined_at: datetime
    session: str
    workspace_root: str
    agents: int = Field(description="its agents not retired, its node session aside")
    running: int = Field(description="turns running on it now")

    @classmethod
    def of(
        cls, node: Node, now: datetime, offline_after: timedelta, session: str, load: Workload
    ) -> NodeOut:
        return cls(
            name=node.name,
            status=node.status(now, offline_after).value,
            last_seen_at=node.last_seen_at,
            hostname=node.hostname,
            engram=node.engram,
            joined_at=node.joined_at,
            session=session,
            workspace_root=node.workspace_root,
            agents=load.agents,
            running=load.running,
        )


class CredentialsIn(Body):
    model_config = example(replace=False)

    replace: bool = Field(
        False, description="revoke the name's live credentials first (else refused: 409)"
    )


class CredentialsOut(BaseModel):
    node: str
    public_key: str = Field(description="the credentials' user key: the hub keeps only this")
    issued_at: datetime
    creds: str = Field(
        description="the .creds file for the node's machine (0600 there): shown only once"
    )
