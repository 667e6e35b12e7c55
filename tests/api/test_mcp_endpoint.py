"""/mcp, Parley as an MCP server for command brains, tried with the real ``mcp`` client over
HTTP against a real server: a running turn's token lists its own actions (a node session's
narrower list) and acts with them as /act would; anything but a running turn's token is
refused before the protocol is read."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from parley.actions.table import AGENT_TOOLS
from parley.cli.main import app as cli_app
from parley.settings import Settings
from tests.served import Served, serving

HOLDER = (
    "import os, pathlib, time\n"
    "pathlib.Path('token').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
    "time.sleep(60)\n"
)


@asynccontextmanager
async def _session(url: str, token: str) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with (
        client,
        streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def _text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


def _holding(served: Served, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """A command brain that holds its turn open on a task; its run's token, and the task."""
    program = tmp_path / "holder.py"
    program.write_text(HOLDER)
    owner = {"Authorization": f"Bearer {served.owner_token}"}
    with httpx.Client(base_url=f"{served.url}/api/v1", headers=owner) as api:
        hired = api.post(
            "/agents",
            json={"name": "boss", "node": "local", "brain": f"command:{sys.executable} {program}"},
        )
        assert hired.status_code == 201, hired.text
        task = api.post("/tasks", json={"agent": "boss", "text": "plan the week"}).json()
    token_file = Path(hired.json()["workspace"]) / "token"
    for _ in range(500):
        if token_file.exists() and token_file.read_text():
            return token_file.read_text(), task
        time.sleep(0.02)
    raise AssertionError("the turn did not start")


async def test_a_running_turn_lists_and_calls_its_own_actions(
    settings: Settings, tmp_path: Path
) -> None:
    with serving(settings) as served:
        token, task = _holding(served, tmp_path)
        async with _session(served.url, token) as session:
            listed = await session.list_tools()
            remembered = await session.call_tool("remember", {"note": "Mondays are slow"})
            refused = await session.call_tool("send", {"to": "nobody", "text": "hi"})
            workspace = await session.call_tool("read", {"path": "token"})
            reported = await session.call_tool("report", {"text": "halfway"})
        owner = {"Authorization": f"Bearer {served.owner_token}"}
        async with httpx.AsyncClient(base_url=f"{served.url}/api/v1", headers=owner) as api:
            memory = (await api.get("/agents/boss/memory")).json()
            shown = (await api.get(f"/tasks/{task['id']}")).json()
    assert [tool.name for tool in listed.tools] == list(AGENT_TOOLS)
    spawn = next(tool for tool in listed.tools if tool.name == "spawn")
    assert set(spawn.input_schema["properties"]) == {"agent", "text", "thread"}
    assert not remembered.is_error and _text(remembered) == "remembered"
    assert refused.is_error and "nobody" in _text(refused)
    assert workspace.is_error and "workspace" in _text(workspace)
    assert not reported.is_error
    assert [note["note"] for note in memory["items"]] == ["Mondays are slow"]
    assert "halfway" in [m["body"] for m in shown["messages"]["items"]]


def test_anything_but_a_running_turn_s_token_is_refused(settings: Settings, tmp_path: Path) -> None:
    """No token, a person's, a forged one, the run's under another scheme, and the run's once it
    was stopped: each 401 before the protocol is read."""
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    with serving(settings) as served:
        token, _ = _holding(served, tmp_path)
        owner = {"Authorization": f"Bearer {served.owner_token}"}
        with httpx.Client(base_url=served.url) as http:
            refused = [
                http.post("/mcp", json=listing, headers=headers)
                for headers in (
                    {},
                    owner,
                    {"Authorization": "Bearer prt_forged"},
                    {"Authorization": f"Basic {token}"},
                )
            ]
            [run] = http.get("/api/v1/runs?agent=boss", headers=owner).json()["items"]
            stopped = http.post(f"/api/v1/runs/{run['id']}/stop", headers=owner)
            after_stop = http.post(
                "/mcp", json=listing, headers={"Authorization": f"Bearer {token}"}
            )
    assert stopped.status_code == 200
    for answer in [*refused, after_stop]:
        assert answer.status_code == 401, answer.text
        assert answer.json()["error"] == "unauthorized"
    assert "running turn" in after_stop.json()["message"]


def test_mcp_config_names_the_endpoint_and_the_token_s_variable_never_its_value() -> None:
    """What Claude Code and Codex read: /mcp at this turn's Parley, the bearer taken from
    PARLEY_RUN_TOKEN when they start (the token is not printed)."""
    env = {"PARLEY_URL": "http://127.0.0.1:8123", "PARLEY_RUN_TOKEN": "prt_secret-of-the-run"}
    claude = CliRunner().invoke(cli_app, ["act", "mcp-config", "--for", "claude"], env=env)
    codex = CliRunner().invoke(cli_app, ["act", "mcp-config", "--for", "codex"], env=env)
    other = CliRunner().invoke(cli_app, ["act", "mcp-config", "--for", "vim"], env=env)
    assert claude.exit_code == 0 and codex.exit_code == 0, (claude.output, codex.output)
    server = json.loads(claude.stdout)["mcpServers"]["parley"]
    assert server == {
        "type": "http",
        "url": "${PARLEY_URL}/mcp",
        "headers": {"Authorization": "Bearer ${PARLEY_RUN_TOKEN}"},
    }
    assert codex.stdout.split() == [
        "-c",
        'mcp_servers.parley.url="http://127.0.0.1:8123/mcp"',
        "-c",
        'mcp_servers.parley.bearer_token_env_var="PARLEY_RUN_TOKEN"',
    ]
    assert "prt_secret" not in claude.stdout + codex.stdout
    assert other.exit_code != 0
