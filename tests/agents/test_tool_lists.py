"""Each agent's own list of workspace tools: read-only unless given more, set whole by an owner,
shown, recorded as a change, copied to clones, checked by name; a node session runs no command
unless the operator grants it; a turn is offered Parley's actions and its agent's list."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parley.actions.table import AGENT_TOOLS, NODE_SESSION_TOOLS, WORKSPACE_TOOLS
from parley.agents.tools import parse_tools
from parley.errors import Invalid
from parley.hub.actions import tools_of
from parley.settings import Settings
from tests.support import Harness, items, started


async def _patch(client: httpx.AsyncClient, name: str, **body: Any) -> httpx.Response:
    return await client.patch(f"/api/v1/agents/{name}", json=body)


async def test_a_new_agent_has_the_read_only_tools_unless_hired_with_others(
    parley: Harness,
) -> None:
    assert (await parley.hire("scribe"))["tools"] == ["read", "list", "find"]
    # Given in any order and twice, kept once each, in the table's order.
    hired = await parley.hire("builder", tools=["run", "write", "read", "run"])
    assert hired["tools"] == ["read", "write", "run"]
    assert (await parley.hire("mute", tools=[]))["tools"] == []
    assert (await parley.agent("builder"))["tools"] == ["read", "write", "run"]


async def test_an_owner_sets_the_whole_list_and_the_change_is_recorded(parley: Harness) -> None:
    await parley.hire("scribe")
    changed = await _patch(parley.owner, "scribe", tools=["read", "edit"])
    assert changed.status_code == 200, changed.text
    assert changed.json()["tools"] == ["read", "edit"]
    again = await _patch(parley.owner, "scribe", tools=["edit", "read"])  # the same list
    assert again.status_code == 200
    history = items((await parley.owner.get("/api/v1/agents/scribe/changes")).json())
    assert [(c["setting"], c["old"], c["new"]) for c in history] == [
        ("tools", "read,list,find", "read,edit")
    ]
    emptied = await _patch(parley.owner, "scribe", tools=[])
    assert emptied.json()["tools"] == []


async def test_an_unknown_tool_is_refused_by_name_and_changes_nothing(parley: Harness) -> None:
    await parley.hire("scribe")
    for tools in (["read", "rm"], ["send"], ["READ"], ["read\x00"]):
        refused = await _patch(parley.owner, "scribe", tools=tools)
        assert refused.status_code == 400, tools
        assert "tool" in refused.json()["message"]
        hiring = await parley.owner.post(
            "/api/v1/agents", json={"name": "other", "node": "local", "tools": tools}
        )
        assert hiring.status_code == 400, tools
    assert (await parley.agent("scribe"))["tools"] == ["read", "list", "find"]
    assert (await parley.owner.get("/api/v1/agents/other")).status_code == 404
    too_many = await _patch(parley.owner, "scribe", tools=["read"] * 50)
    assert too_many.status_code == 400


async def test_only_owners_change_a_tool_list(parley: Harness) -> None:
    await parley.hire("scribe")
    member = parley.client(await parley.add_person("ada"))
    async with member:
        assert (await _patch(member, "scribe", tools=["run"])).status_code == 403
    assert (await parley.agent("scribe"))["tools"] == ["read", "list", "find"]


async def test_a_node_session_runs_no_command_unless_the_operator_grants_it(
    parley: Harness,
) -> None:
    assert (await parley.agent("node:local"))["tools"] == ["read", "list", "find"]
    refused = await _patch(parley.owner, "node:local", tools=["read", "run"])
    assert refused.status_code == 403
    assert "node_sessions_may_run" in refused.json()["message"]
    assert (await parley.agent("node:local"))["tools"] == ["read", "list", "find"]
    writes = await _patch(parley.owner, "node:local", tools=["read", "write", "edit"])
    assert writes.status_code == 200, writes.text


async def test_an_operator_may_grant_a_node_session_commands(
    settings: Settings, clock: Any
) -> None:
    granting = settings.model_copy(update={"node_sessions_may_run": True})
    async with started(granting, clock) as parley:
        granted = await _patch(parley.owner, "node:local", tools=["run"])
        assert granted.status_code == 200, granted.text
        assert granted.json()["tools"] == ["run"]


async def test_a_clone_has_its_template_s_tools(parley: Harness) -> None:
    await parley.hire("researcher", template=True, clone_lifetime="1h", tools=["read", "run"])
    clone = await parley.owner.post("/api/v1/agents/researcher/clones", json={})
    assert clone.status_code == 201, clone.text
    assert clone.json()["tools"] == ["read", "run"]


async def test_a_run_is_offered_parley_s_actions_then_its_agent_s_list(parley: Harness) -> None:
    await parley.hire("builder", tools=["write", "run"])
    async with parley.context.store.transaction() as tx:
        builder = await tx.agents.by_name("builder")
        session = await tx.agents.by_name("node:local")
    assert builder is not None and session is not None
    assert tools_of(builder) == (*AGENT_TOOLS, "write", "run")
    assert tools_of(session) == (*NODE_SESSION_TOOLS, "read", "list", "find")


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from([*WORKSPACE_TOOLS, "rm", "", " read ", "none"]), max_size=8))
def test_a_written_list_is_the_tools_it_names_or_a_refusal(names: list[str]) -> None:
    written = [name.strip() for name in names if name.strip()]
    if written in ([], ["none"]):
        assert parse_tools(",".join(names)) == ()
    elif all(name in WORKSPACE_TOOLS for name in written):
        expected = tuple(name for name in WORKSPACE_TOOLS if name in written)
        assert parse_tools(",".join(names)) == expected
    else:
        with pytest.raises(Invalid, match="there is no tool"):
            parse_tools(",".join(names))


@pytest.mark.parametrize("written", ["none", " NONE ", ""])
def test_none_or_nothing_written_is_no_tool(written: str) -> None:
    assert parse_tools(written) == ()
