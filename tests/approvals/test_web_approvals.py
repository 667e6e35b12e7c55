"""The web Turns page lists the calls waiting for the person's approval, with their exact
arguments, and its buttons approve, deny (with a reason) and stop; another member's page shows
none of them; the hire form sets which tools ask first."""

from __future__ import annotations

import html
import re
from pathlib import Path

from tests.approvals.test_perimeter import RUN
from tests.runs.support import get, holding_brain, say, token_of
from tests.support import Harness, bearer, eventually
from tests.web.support import signed_in


async def _asked(parley: Harness, tmp_path: Path, agent: str, command: str) -> dict[str, object]:
    hired = await parley.hire(agent, brain=holding_brain(tmp_path), tools=["run"])
    queued = await say(parley.owner, agent, "deploy")
    token = await token_of(hired["workspace"], queued["run_id"])
    body = {"tool": "run", "arguments": {"command": command}}
    asked = await parley.owner.post("/api/v1/act/approvals", json=body, headers=bearer(token))
    assert asked.status_code == 201, asked.text
    approval: dict[str, object] = asked.json()["approval"]
    return approval


async def test_the_turns_page_shows_a_waiting_call_and_its_buttons_decide_it(
    parley: Harness, tmp_path: Path
) -> None:
    denied = await _asked(parley, tmp_path, "deployer", "rm -rf build/ && make <deploy>")
    approved = await _asked(parley, tmp_path, "builder", "make")
    stopped = await _asked(parley, tmp_path, "runner", "sleep 1000")
    async with signed_in(parley) as browser:
        page = (await browser.get("/turns")).text
        deny = await browser.post(f"/approvals/{denied['id']}/deny", {"reason": "not today"})
        approve = await browser.post(f"/approvals/{approved['id']}/approve")
        stop = await browser.post(f"/runs/{stopped['run_id']}/stop")
        after = (await browser.get("/turns")).text
    shown = html.unescape(page)
    assert '"command": "rm -rf build/ && make <deploy>"' in shown  # exactly, and escaped
    assert "&lt;deploy&gt;" in page and "<deploy>" not in page
    assert "deployer asks to call" in shown and f"approval {denied['id']}" in shown
    assert deny.status_code == approve.status_code == stop.status_code == 303
    assert (await get(parley.owner, f"/approvals/{denied['id']}"))["reason"] == "not today"
    assert (await get(parley.owner, f"/approvals/{approved['id']}"))["state"] == "approved"
    assert await eventually(lambda: _ended(parley, stopped["run_id"]))
    assert "No call waits for your approval." in after


async def test_another_member_s_turns_page_shows_none_of_them(
    parley: Harness, tmp_path: Path
) -> None:
    await _asked(parley, tmp_path, "deployer", RUN["arguments"]["command"])  # type: ignore[index]
    mia = await parley.add_person("mia")
    async with signed_in(parley, mia) as browser:
        page = (await browser.get("/turns")).text
    assert "No call waits for your approval." in page and "make deploy" not in page


async def test_the_hire_form_sets_which_tools_ask_first(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        form = (await browser.get("/agents")).text
        fields = [
            ("name", "scribe"),
            ("node", "local"),
            ("tools_listed", "1"),
            ("tools", "read"),
            ("tools", "write"),
            ("ask", "write"),
        ]
        hired = await browser.post("/agents", fields)
    assert re.search(r'name="ask" value="run" checked', form)  # run asks first by default
    assert hired.status_code == 303, hired.text
    agent = await parley.agent("scribe")
    assert agent["tools"] == ["read", "write"] and agent["ask"] == ["write"]


async def _ended(parley: Harness, run_id: object) -> bool:
    return bool((await get(parley.owner, f"/runs/{run_id}"))["run"]["state"] == "stopped")
