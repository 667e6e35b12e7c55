"""What crosses the broker between hub and nodes. Pydantic models: validated on arrival."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

REGISTER = "parley.mesh.register"
HEARTBEAT = "parley.mesh.heartbeat"


def provision_subject(node: str) -> str:
    return f"parley.node.{node}.provision"


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Register(Message):
    node: str
    join_token: str
    hostname: str
    workspace_root: str


class RegisterReply(Message):
    accepted: bool
    reason: str = ""


class Heartbeat(Message):
    node: str
    join_token: str


class Provision(Message):
    agent: str


class ProvisionReply(Message):
    workspace: str
