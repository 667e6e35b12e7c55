"""Helpers for runtime tests: scripted brains written to files, and talking to agents over HTTP."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx

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
