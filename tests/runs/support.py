"""Helpers for runtime tests: scripted brains written to files, and talking to agents over HTTP."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

from parley.node.messages import RunEvent, run_outcomes_subject
from tests.support import Harness, eventually


def script(directory: Path, name: str, text: str) -> str:
    """Write a scripted brain's rules and return its brain spec."""
    path = directory / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    return f"scripted:{path}"


async def say(client: httpx.AsyncClient, agent: str, text: str) -> dict[str, Any]:
    response = await client.post(f"/api/v1/conversations/{agent}/messages", json={"text": text})
    assert response.status_code == 202, response.text
    queued = response.json()
    assert isinstance(queued, dict)
    return queued


async def follow(client: httpx.AsyncClient, run_id: int) -> tuple[list[str], dict[str, Any]]:
    """The chunks of a run's reply as they came, and how it ended."""
    chunks: list[str] = []
    async with client.stream("GET", f"/api/v1/runs/{run_id}/events") as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if not line:
                continue
            event = json.loads(line)
            if event["kind"] == "chunk":
                chunks.append(event["text"])
            elif event["kind"] == "end":
                return chunks, event
    raise AssertionError("the event stream ended without an end event")


async def say_and_wait(parley: Harness, agent: str, text: str) -> dict[str, Any]:
    queued = await say(parley.owner, agent, text)
    _, end = await follow(parley.owner, queued["run_id"])
    return end


async def get(client: httpx.AsyncClient, path: str, status: int = 200) -> Any:
    response = await client.get(f"/api/v1{path}")
    assert response.status_code == status, response.text
    return response.json()


# First turn: hands its run token over and holds the turn open. Later turns answer at once.
HOLD_ONCE = (
    "import os, pathlib, sys, time\n"
    "token = pathlib.Path('token')\n"
    "if token.exists():\n"
    "    print('back again')\n"
    "    sys.exit(0)\n"
    "token.write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "time.sleep(60)\n"
)


async def hold_a_turn(parley: Harness, tmp_path: Path, agent: str) -> tuple[int, str]:
    """Hire ``agent`` with a brain that holds its first turn open; its run id and token."""
    program = tmp_path / "hold_once.py"
    program.write_text(HOLD_ONCE)
    hired = await parley.hire(agent, brain=f"command:{sys.executable} {program}")
    queued = await say(parley.owner, agent, "hold on")
    token_file = Path(hired["workspace"]) / "token"
    assert await eventually(lambda: _written(token_file))
    return queued["run_id"], token_file.read_text()


async def _written(path: Path) -> bool:
    return path.exists() and bool(path.read_text())


# Every turn hands its run token over (a file named after its run) and holds the turn open.
HOLD_EACH = (
    "import os, pathlib, time\n"
    "token = pathlib.Path(f\"token-{os.environ['PARLEY_RUN_ID']}\")\n"
    "token.write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "time.sleep(60)\n"
)


def holding_brain(tmp_path: Path) -> str:
    """A command brain that holds each of its turns open, its token at hand (``token_of``)."""
    program = tmp_path / "hold_each.py"
    program.write_text(HOLD_EACH)
    return f"command:{sys.executable} {program}"


async def token_of(workspace: str, run_id: int) -> str:
    """The token of run ``run_id`` of an agent of ``holding_brain``, once its turn began."""
    path = Path(workspace) / f"token-{run_id}"
    assert await eventually(lambda: _written(path)), f"run {run_id} never began"
    return path.read_text()


async def end_as_node(parley: Harness, event: RunEvent, node: str = "local") -> None:
    """Store a turn's end as ``node`` does (its TurnHost), on the node's own subject."""
    data = event.model_dump_json().encode()
    await parley.context.broker.send_durable(run_outcomes_subject(node), data, event.message_id)


async def get_all(client: httpx.AsyncClient, path: str) -> list[Any]:
    """Every row of a list, page after page (newest first, as the list gives them)."""
    rows: list[Any] = []
    separator = "&" if "?" in path else "?"
    page = await get(client, f"{path}{separator}limit=500")
    while True:
        rows += page["items"]
        if page["next"] is None:
            return rows
        page = await get(client, f"{path}{separator}limit=500&before={page['next']}")
