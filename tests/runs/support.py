"""Helpers for runtime tests: scripted brains written to files, and talking to agents over HTTP."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import httpx

from tests.support import Harness


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
            else:
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
