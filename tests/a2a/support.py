"""A Parley served on a loopback port with agents exposed over A2A, and a2a-sdk's own client
talking to them as any A2A client would: over real HTTP, with the token an owner issued."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.helpers import new_text_part
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    Task,
)
from a2a.utils.constants import TransportProtocol

from parley.settings import Settings
from tests.conftest import sqlite_copy
from tests.served import Served, serving
from tests.support import bearer, eventually

# Prints a first part at once, then holds its turn until stopped.
SLOW = """
import time
print("first part", flush=True)
time.sleep(120)
"""


@dataclass
class A2AHome:
    served: Served
    tmp: Path
    tokens: dict[str, str] = field(default_factory=dict)  # what a test kept between examples
    kept_runs: int = 0

    def owner(self) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.served.url}/api/v1", headers=bearer(self.served.owner_token)
        )

    def hire(self, name: str, brain: str = "offline") -> None:
        with self.owner() as owner:
            hired = owner.post("/agents", json={"name": name, "node": "local", "brain": brain})
            assert hired.status_code == 201, hired.text
            exposed = owner.post("/a2a/agents", json={"agent": name})
            assert exposed.status_code == 201, exposed.text

    def hire_slow(self, name: str) -> None:
        path = self.tmp / f"{name}.py"
        path.write_text(SLOW)
        self.hire(name, f"command:{sys.executable} {path}")

    def client_token(self, name: str) -> str:
        with self.owner() as owner:
            added = owner.post("/a2a/clients", json={"name": name})
            assert added.status_code == 201, added.text
            token: str = added.json()["token"]
            return token

    def agent_url(self, agent: str) -> str:
        return f"{self.served.url}/a2a/{agent}"

    @asynccontextmanager
    async def client(
        self, agent: str, token: str, streaming: bool = False, rest: bool = False
    ) -> AsyncIterator[Client]:
        async with httpx.AsyncClient(headers=bearer(token), timeout=60) as http:
            bindings: list[str] = [
                TransportProtocol.HTTP_JSON if rest else TransportProtocol.JSONRPC
            ]
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=bindings,
                use_client_preference=True,
            )
            client = await ClientFactory(config).create_from_url(self.agent_url(agent))
            try:
                yield client
            finally:
                await client.close()


@contextmanager
def home(
    tmp_path: Path, sqlite_template: Path, database_url: str | None = None, **settings: Any
) -> Iterator[A2AHome]:
    """A Parley served on SQLite, or on ``database_url`` (``settings``: others than the
    tests' defaults)."""
    given = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url or sqlite_copy(sqlite_template, tmp_path / "parley.db"),
        heartbeat_seconds=3600,
        sweep_seconds=3600,
        **settings,
    )
    with serving(given) as served:
        yield A2AHome(served, tmp_path)


def request(
    text: str,
    context_id: str = "",
    task_id: str = "",
    return_immediately: bool = False,
) -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=str(uuid.uuid4()),
        parts=[new_text_part(text)],
        context_id=context_id,
        task_id=task_id,
    )
    configuration = SendMessageConfiguration(return_immediately=return_immediately)
    return SendMessageRequest(message=message, configuration=configuration)


# Each turn says it started (``turn-N``, its prompt), then waits for ``go-N`` before replying
# "reply N": the test decides when a turn ends.
GATED = """
import pathlib, sys, time
prompt = sys.stdin.read()
turn = len(list(pathlib.Path(".").glob("turn-*"))) + 1
pathlib.Path(f"turn-{turn}").write_text(prompt)
while not pathlib.Path(f"go-{turn}").exists():
    time.sleep(0.02)
print(f"reply {turn}", flush=True)
"""


class Gated:
    """A served Parley with the agent ``gated`` exposed, and a client's token for it."""

    def __init__(self, served: A2AHome) -> None:
        self.served = served
        program = served.tmp / "gated.py"
        program.write_text(GATED)
        served.hire("gated", f"command:{sys.executable} {program}")
        self.token = served.client_token("planner")
        with served.owner() as owner:
            self.workspace = Path(owner.get("/agents/gated").json()["workspace"])

    async def started(self, turn: int) -> bool:
        async def there() -> bool:
            return (self.workspace / f"turn-{turn}").exists()

        return await eventually(there, within=30)

    def let_end(self, turn: int) -> None:
        (self.workspace / f"go-{turn}").write_text("")

    def runs(self) -> list[dict[str, Any]]:
        with self.served.owner() as owner:
            found: list[dict[str, Any]] = owner.get("/runs", params={"agent": "gated"}).json()[
                "items"
            ]
        return found

    async def send(self, text: str, task_id: str = "", wait: bool = False) -> Task:
        async with self.served.client("gated", self.token) as client:
            sent = request(text, task_id=task_id, return_immediately=not wait)
            answers = [answer async for answer in client.send_message(sent)]
        task: Task = answers[-1].task
        return task

    async def get(self, task_id: str, history_length: int | None = None) -> Task:
        async with self.served.client("gated", self.token) as client:
            return await client.get_task(GetTaskRequest(id=task_id, history_length=history_length))


def texts_of(task: Task) -> list[str]:
    """A task's history, each message's text."""
    return [message.parts[0].text.strip() for message in task.history]
