"""Approvals tried from outside: who sees and decides one (the person whose conversation the
turn works for, and owners; no other member, who finds none), and what a run's token may ask
and read (its own turn's approvals, of its own tools that ask first, within bounds). Each
refusal says what was wrong and leaves nothing behind."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx

from parley.approvals.asking import MAX_WAITING_PER_RUN
from tests.approvals.support import decide, waiting
from tests.runs.support import get, holding_brain, say, token_of
from tests.support import Harness, bearer, items
from tests.tools import mcp_test_server

RUN = {"tool": "run", "arguments": {"command": "make deploy"}}


async def _held(parley: Harness, tmp_path: Path, agent: str, by: httpx.AsyncClient) -> str:
    """A turn of ``agent`` (tools: run, asking first) said to by ``by``, held open: its token."""
    hired = await parley.hire(agent, brain=holding_brain(tmp_path), tools=["run", "read"])
    queued = await say(by, agent, "deploy")
    return await token_of(hired["workspace"], queued["run_id"])


async def _ask(parley: Harness, token: str, body: Any, status: int = 201) -> dict[str, Any]:
    answer = await parley.owner.post("/api/v1/act/approvals", json=body, headers=bearer(token))
    assert answer.status_code == status, answer.text
    found = answer.json()
    assert isinstance(found, dict)
    return found


async def test_the_person_of_the_conversation_and_owners_decide_and_no_other_member(
    parley: Harness, tmp_path: Path
) -> None:
    mia, bob = await parley.add_person("mia"), await parley.add_person("bob")
    async with parley.client(mia) as as_mia, parley.client(bob) as as_bob:
        token = await _held(parley, tmp_path, "deployer", as_mia)
        asked = (await _ask(parley, token, RUN))["approval"]
        (for_mia,) = await waiting(as_mia)
        (for_owner,) = await waiting(parley.owner)
        bobs = items(await get(as_bob, "/me/approvals"))
        shown = await as_bob.get(f"/api/v1/approvals/{asked['id']}")
        refused = await decide(as_bob, asked["id"], "approve", status=404)
        missing = await decide(as_bob, 987654, "approve", status=404)
        approved = await decide(as_mia, asked["id"], "approve")
    assert for_mia["id"] == for_owner["id"] == asked["id"]
    assert for_mia["arguments"] == RUN["arguments"] and for_mia["agent"] == "deployer"
    assert bobs == [] and shown.status_code == 404
    # Bob is told exactly what he would be told of an approval that does not exist.
    assert refused["message"].replace(str(asked["id"]), "N") == missing["message"].replace(
        "987654", "N"
    )
    assert approved["decided_by"] == "mia" and approved["state"] == "approved"


async def test_a_run_token_reads_its_own_turn_s_approvals_only(
    parley: Harness, tmp_path: Path
) -> None:
    first = await _held(parley, tmp_path, "first", parley.owner)
    second = await _held(parley, tmp_path, "second", parley.owner)
    asked = (await _ask(parley, first, RUN))["approval"]
    url = f"/api/v1/act/approvals/{asked['id']}"
    own = await parley.owner.get(url, headers=bearer(first))
    other_run = await parley.owner.get(url, headers=bearer(second))
    person = await parley.owner.get(url)  # the owner's own token is no run's
    forged = await parley.owner.get(url, headers=bearer("prl_run_" + "x" * 40))
    assert own.status_code == 200 and own.json()["approval"]["state"] == "waiting"
    assert own.json()["result"] is None
    assert other_run.status_code == 404 and "this turn asked no approval" in other_run.text
    assert person.status_code == 401 and forged.status_code == 401


async def test_a_run_asks_only_for_its_own_tools_that_ask_first_within_bounds(
    parley: Harness, tmp_path: Path
) -> None:
    token = await _held(parley, tmp_path, "deployer", parley.owner)
    off_its_tools = await _ask(parley, token, {"tool": "write", "arguments": {}}, 403)
    not_asking = await _ask(parley, token, {"tool": "read", "arguments": {"path": "a"}}, 400)
    made_up = await _ask(parley, token, {"tool": "x" * 5000, "arguments": {}}, 403)
    other_server = await _ask(parley, token, {"tool": "files.delete", "arguments": {}}, 403)
    nul = await _ask(parley, token, {"tool": "run", "arguments": {"command": "a\x00b"}}, 400)
    huge = await _ask(
        parley, token, {"tool": "run", "arguments": {"command": "y" * 2_000_000}}, 413
    )
    for _ in range(MAX_WAITING_PER_RUN):
        await _ask(parley, token, RUN)
    one_too_many = await _ask(parley, token, RUN, 409)
    listed = items(await get(parley.owner, "/me/approvals?limit=500"))
    assert "not one of deployer's tools" in off_its_tools["message"]
    assert "does not ask before read" in not_asking["message"]
    assert made_up["message"].endswith("is not one of deployer's tools")
    assert len(made_up["message"]) < 200  # the name is shortened, not echoed whole
    assert "not one of deployer's tools" in other_server["message"]
    assert "NUL" in nul["message"] or "nul" in nul["message"].lower()
    assert huge["error"] == "too_large"
    assert f"{MAX_WAITING_PER_RUN} calls waiting" in one_too_many["message"]
    assert len(listed) == MAX_WAITING_PER_RUN  # the refused ones left nothing behind


async def test_a_deny_reason_is_bounded_and_a_decision_of_nothing_is_refused(
    parley: Harness, tmp_path: Path
) -> None:
    token = await _held(parley, tmp_path, "deployer", parley.owner)
    asked = (await _ask(parley, token, RUN))["approval"]
    too_long = await decide(parley.owner, asked["id"], "deny", status=400, reason="r" * 2001)
    nul = await decide(parley.owner, asked["id"], "deny", status=400, reason="a\x00")
    out_of_range = await parley.owner.post("/api/v1/approvals/99999999999999999999/approve")
    still = await get(parley.owner, f"/approvals/{asked['id']}")
    assert too_long["error"] == "invalid" and nul["error"] == "invalid"
    assert out_of_range.status_code in (400, 404, 422)
    assert still["state"] == "waiting"  # a refused decision decided nothing


async def test_a_tool_of_its_own_server_with_a_name_past_the_cap_is_refused(
    parley: Harness, tmp_path: Path
) -> None:
    """An MCP server's every tool asks first: a made-up tool name of it, however long, is
    refused by its length before anything is kept."""
    server = {"name": "calc", "command": f"{sys.executable} {mcp_test_server.__file__}"}
    hired = await parley.hire(
        "counter", brain=holding_brain(tmp_path), tools=[], mcp=[server], ask=["calc"]
    )
    queued = await say(parley.owner, "counter", "count")
    token = await token_of(hired["workspace"], queued["run_id"])
    long_name = await _ask(parley, token, {"tool": "calc." + "x" * 300, "arguments": {}}, 400)
    fits = await _ask(parley, token, {"tool": "calc.add", "arguments": {"a": 1, "b": 2}})
    listed = items(await get(parley.owner, "/me/approvals"))
    assert "at most 200 characters" in long_name["message"] and len(long_name["message"]) < 200
    assert [a["id"] for a in listed] == [fits["approval"]["id"]]
