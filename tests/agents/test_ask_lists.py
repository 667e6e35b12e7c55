"""Each agent's ask list: which of its tools wait for a person's approval before each call. A new
agent asks before run; an owner sets the whole list (workspace tools, its MCP servers, a tool of
one), a change is recorded, a clone copies it; a name that fits nothing is refused, so a typo
never leaves a tool acting unasked."""

from __future__ import annotations

from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from parley.actions.table import WORKSPACE_TOOLS
from parley.agents.tools import check_ask, parse_ask
from parley.approvals.model import asks_first
from parley.errors import Invalid
from tests.support import Harness, items

FILES = {"name": "files", "command": "python -m files_server"}


async def _patch(client: httpx.AsyncClient, name: str, **body: Any) -> httpx.Response:
    return await client.patch(f"/api/v1/agents/{name}", json=body)


async def test_a_new_agent_asks_before_run_unless_hired_asking_otherwise(parley: Harness) -> None:
    assert (await parley.hire("scribe"))["ask"] == ["run"]
    hired = await parley.hire(
        "builder", tools=["write", "run"], mcp=[FILES], ask=["write", "files"]
    )
    assert hired["ask"] == ["files", "write"]
    assert (await parley.hire("trusted", tools=["run"], ask=[]))["ask"] == []


async def test_an_owner_sets_the_whole_list_and_the_change_is_recorded(parley: Harness) -> None:
    await parley.hire("builder", tools=["write", "run"], mcp=[FILES])
    changed = await _patch(parley.owner, "builder", ask=["files.delete", "write", "run"])
    assert changed.status_code == 200, changed.text
    assert changed.json()["ask"] == ["files.delete", "run", "write"]
    history = items((await parley.owner.get("/api/v1/agents/builder/changes")).json())
    assert [(c["setting"], c["old"], c["new"]) for c in history] == [
        ("ask", "run", "files.delete,run,write")
    ]


async def test_a_name_that_fits_nothing_is_refused_and_changes_nothing(parley: Harness) -> None:
    await parley.hire("builder", tools=["run"], mcp=[FILES])
    for ask in (["rn"], ["fils"], ["fils.delete"], ["files.del ete"], ["run\x00"], ["x" * 500]):
        refused = await _patch(parley.owner, "builder", ask=ask)
        assert refused.status_code == 400, ask
        assert refused.json()["field"].startswith("ask"), refused.text
        assert "neither a workspace tool" in refused.text or "NUL" in refused.text
        assert len(refused.json()["message"]) < 400  # a long name is not echoed whole
    assert (await parley.agent("builder"))["ask"] == ["run"]


async def test_a_server_given_with_the_change_may_be_named_in_it(parley: Harness) -> None:
    await parley.hire("builder")
    changed = await _patch(parley.owner, "builder", mcp=[FILES], ask=["files"])
    assert changed.status_code == 200, changed.text
    assert changed.json()["ask"] == ["files"]


async def test_only_owners_change_an_ask_list(parley: Harness) -> None:
    await parley.hire("builder")
    mia = await parley.add_person("mia")
    async with parley.client(mia) as member:
        refused = await _patch(member, "builder", ask=[])
    assert refused.status_code == 403
    assert (await parley.agent("builder"))["ask"] == ["run"]


async def test_a_clone_asks_as_its_template_does(parley: Harness) -> None:
    await parley.hire("tmpl", template=True, clone_lifetime="1h", tools=["write"], ask=["write"])
    cloned = await parley.owner.post("/api/v1/agents/tmpl/clones", json={})
    assert cloned.status_code == 201, cloned.text
    assert cloned.json()["ask"] == ["write"]


@given(st.lists(st.sampled_from([*WORKSPACE_TOOLS, "files", "files.delete", "web.fetch"])))
def test_an_ask_list_keeps_each_known_name_once_sorted(names: list[str]) -> None:
    assert check_ask(names, ["files", "web"]) == tuple(sorted(set(names)))


@given(st.text(max_size=40))
def test_a_written_ask_list_is_its_names_or_a_refusal(written: str) -> None:
    try:
        checked = check_ask(parse_ask(written), ["files"])
    except Invalid as refused:
        assert refused.fields["field"] == "ask"
        return
    for name in checked:
        assert name in WORKSPACE_TOOLS or name == "files" or name.startswith("files.")


def test_a_call_asks_first_when_its_tool_or_its_server_is_listed() -> None:
    assert asks_first(["run"], "run") and not asks_first(["run"], "write")
    assert asks_first(["files"], "files.delete") and asks_first(["files.delete"], "files.delete")
    assert not asks_first(["files.delete"], "files.read") and not asks_first(["files"], "filesx.a")
    assert not asks_first([], "run")
    assert parse_ask("none") == () and parse_ask(" run , write ") == ("run", "write")
