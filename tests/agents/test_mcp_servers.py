"""An agent's own MCP servers as owners give them: at hire and by change (added or replaced by
name, removed by name), shown, recorded, copied to clones; each checked (a name, a command or
an http(s) URL, never credentials in the URL, headers only from variable names); a node session
has none unless the operator grants it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from parley.agents.mcp import parse_server, with_headers
from parley.agents.model import McpServer
from parley.errors import Invalid
from parley.settings import Settings
from tests.support import Harness, ManualClock, items, started

SEARCH = {
    "name": "search",
    "url": "https://mcp.example.com/mcp",
    "headers_from_env": {"Authorization": "SEARCH_TOKEN"},
}
FILES = {"name": "files", "command": "python -m files_server --root ."}
WEB = "https://a.example"


async def _patch(client: httpx.AsyncClient, name: str, **body: Any) -> httpx.Response:
    return await client.patch(f"/api/v1/agents/{name}", json=body)


def _shown(agent: dict[str, Any]) -> list[tuple[str, str | None, str | None, dict[str, str]]]:
    return [(s["name"], s["command"], s["url"], s["headers_from_env"]) for s in agent["mcp"]]


async def test_an_agent_is_hired_with_servers_and_shows_them_by_name(parley: Harness) -> None:
    hired = await parley.hire("researcher", mcp=[SEARCH, FILES])
    assert _shown(hired) == [
        ("files", FILES["command"], None, {}),
        ("search", None, SEARCH["url"], {"Authorization": "SEARCH_TOKEN"}),
    ]
    assert _shown(await parley.agent("researcher")) == _shown(hired)
    assert (await parley.hire("plain"))["mcp"] == []


async def test_a_change_adds_replaces_and_removes_by_name_and_is_recorded(
    parley: Harness,
) -> None:
    await parley.hire("researcher", mcp=[SEARCH])
    moved = {**SEARCH, "url": "https://other.example.com/mcp"}
    changed = await _patch(parley.owner, "researcher", mcp=[moved, FILES])
    assert changed.status_code == 200, changed.text
    assert [s["url"] or s["command"] for s in changed.json()["mcp"]] == [
        FILES["command"],
        moved["url"],
    ]
    removed = await _patch(parley.owner, "researcher", unset_mcp=["files"])
    assert [s["name"] for s in removed.json()["mcp"]] == ["search"]
    missing = await _patch(parley.owner, "researcher", unset_mcp=["nothing"])
    assert missing.status_code == 400 and "no MCP server 'nothing'" in missing.json()["message"]
    history = items((await parley.owner.get("/api/v1/agents/researcher/changes")).json())
    assert [c["setting"] for c in history] == ["mcp_servers", "mcp_servers"]
    assert history[0]["new"] == "search=https://other.example.com/mcp"  # newest first


@pytest.mark.parametrize(
    ("server", "says"),
    [
        ({"name": "Bad Name", "command": "x"}, "lowercase letter"),
        ({"name": "both", "command": "x", "url": "https://a.example"}, "a command or a URL"),
        ({"name": "none"}, "a command or a URL"),
        ({"name": "ftp", "url": "ftp://a.example/mcp"}, "its URL must be https://"),
        ({"name": "creds", "url": "https://user:pw@a.example/mcp"}, "no credentials"),
        ({"name": "quote", "command": "python 'unclosed"}, "does not parse"),
        ({"name": "hdr", "command": "x", "headers_from_env": {"A": "B"}}, "reached by URL"),
        (
            {"name": "hdr", "url": "https://a.example", "headers_from_env": {"A": "1-bad"}},
            "variable",
        ),
        (
            {"name": "hdr", "url": "https://a.example", "headers_from_env": {"A B": "V"}},
            "header name",
        ),
        ({"name": "nul", "command": "python\x00"}, "NUL"),
    ],
)
async def test_a_bad_server_is_refused_saying_why_and_changes_nothing(
    parley: Harness, server: dict[str, Any], says: str
) -> None:
    await parley.hire("researcher")
    refused = await _patch(parley.owner, "researcher", mcp=[server])
    assert refused.status_code == 400, refused.text
    assert says in refused.json()["message"]
    hiring = await parley.owner.post(
        "/api/v1/agents", json={"name": "other", "node": "local", "mcp": [server]}
    )
    assert hiring.status_code == 400
    assert (await parley.agent("researcher"))["mcp"] == []
    assert (await parley.owner.get("/api/v1/agents/other")).status_code == 404


async def test_two_servers_of_one_name_or_too_many_are_refused(parley: Harness) -> None:
    twice = await parley.owner.post(
        "/api/v1/agents", json={"name": "a", "node": "local", "mcp": [FILES, FILES]}
    )
    assert twice.status_code == 400 and "a name of its own" in twice.json()["message"]
    many = [{"name": f"s{i}", "command": "x"} for i in range(9)]
    too_many = await parley.owner.post(
        "/api/v1/agents", json={"name": "b", "node": "local", "mcp": many}
    )
    assert too_many.status_code == 400


async def test_a_node_session_has_no_server_unless_the_operator_grants_it(
    parley: Harness, settings: Settings, clock: ManualClock
) -> None:
    refused = await _patch(parley.owner, "node:local", mcp=[FILES])
    assert refused.status_code == 403 and "node_sessions_may_run" in refused.json()["message"]
    assert (await parley.agent("node:local"))["mcp"] == []


async def test_an_operator_may_grant_a_node_session_servers(
    settings: Settings, clock: ManualClock
) -> None:
    granting = settings.model_copy(update={"node_sessions_may_run": True})
    async with started(granting, clock) as parley:
        granted = await _patch(parley.owner, "node:local", mcp=[FILES])
    assert granted.status_code == 200 and granted.json()["mcp"][0]["name"] == "files"


async def test_a_clone_has_its_template_s_servers(parley: Harness) -> None:
    await parley.hire("researcher", template=True, clone_lifetime="1h", mcp=[SEARCH])
    clone = await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    assert clone.status_code == 201, clone.text
    assert _shown(clone.json()) == [("search", None, SEARCH["url"], SEARCH["headers_from_env"])]


def test_the_command_line_writes_a_server_and_its_headers() -> None:
    servers = [parse_server("files=python -m srv --root ."), parse_server("s=https://a.example")]
    assert servers == [
        McpServer("files", command="python -m srv --root ."),
        McpServer("s", url="https://a.example"),
    ]
    headed = with_headers(servers, ["s:Authorization=TOKEN", "s:X-Team=TEAM"])
    assert headed[1].headers == (("Authorization", "TOKEN"), ("X-Team", "TEAM"))
    with pytest.raises(Invalid, match="NAME=COMMAND"):
        parse_server("files")
    with pytest.raises(Invalid, match="no --mcp gives"):
        with_headers(servers, ["other:A=B"])
    with pytest.raises(Invalid, match="NAME:Header=VARIABLE"):
        with_headers(servers, ["s-Authorization"])
