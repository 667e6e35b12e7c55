"""The agents, nodes and people pages: owners hire, retire, warn and add people from the page
through the API's own library verbs; members read, and their hand-made posts are refused with
nothing changed; a new token is shown once, on the answer only."""

from __future__ import annotations

import re

import pytest

from tests.support import Harness, eventually, items
from tests.web.support import signed_in

HIRE = {"name": "scribe", "node": "local", "brain": "offline", "max_sessions": "2"}


def _row_of(agent: str, html: str) -> list[str]:
    """The cells of an agent's row in the list after its name: lifecycle, node, brain,
    modality, running, waiting, warnings."""
    row = re.search(rf'<a href="/agents/{agent}">{agent}</a>.*?</tr>', html, re.S)
    assert row is not None, html
    return re.findall(r"<td>(.*?)</td>", row.group(0), re.S)


async def _names(parley: Harness) -> list[str]:
    answer = await parley.owner.get("/api/v1/agents")
    return [agent["name"] for agent in items(answer.json()) if agent["kind"] == "agent"]


async def test_an_owner_hires_and_retires_an_agent_from_the_page(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        listed = await browser.get("/agents")
        assert 'method="post" action="/agents"' in listed.text
        assert 'name="max_sessions"' in listed.text
        hired = await browser.post("/agents", {**HIRE, "engram": "You keep the minutes."})
        assert hired.status_code == 303 and hired.headers["location"] == "/agents/scribe"
        page = await browser.get("/agents/scribe")
        assert "Hired scribe (active)." in page.text  # the notice, once
        assert "You keep the minutes." in page.text and "Retire (drain)" in page.text
        retired = await browser.post("/agents/scribe/retire", {"mode": "drain", "reason": "done"})
        assert retired.status_code == 303
        after = await browser.get("/agents/scribe")
    agent = await parley.agent("scribe")
    assert (agent["lifecycle"], agent["max_sessions"], agent["engram"]) == (
        "retired",
        2,
        "You keep the minutes.",
    )
    assert agent["retired_reason"] == "done"
    assert "scribe is retired." in after.text and "Retire (drain)" not in after.text


async def test_the_hire_form_offers_the_tools_read_only_ticked_and_hires_with_those_ticked(
    parley: Harness,
) -> None:
    async with signed_in(parley) as browser:
        listed = (await browser.get("/agents")).text
        ticked = re.findall(r'name="tools" value="(\w+)" checked', listed)
        offered = re.findall(r'name="tools" value="(\w+)"', listed)
        assert ticked == ["read", "list", "find"]
        assert offered == ["read", "list", "find", "write", "edit", "run"]
        fields = [*HIRE.items(), ("tools_listed", "1"), ("tools", "run"), ("tools", "read")]
        assert (await browser.post("/agents", fields)).status_code == 303
        none = [("name", "mute"), ("node", "local"), ("tools_listed", "1")]
        assert (await browser.post("/agents", none)).status_code == 303
        bad = [("name", "rogue"), ("node", "local"), ("tools_listed", "1"), ("tools", "rm")]
        refused = await browser.post("/agents", bad)
        page = await browser.get("/agents/scribe")
    assert (await parley.agent("scribe"))["tools"] == ["read", "run"]
    assert "<dt>Tools</dt><dd>read, run</dd>" in page.text
    assert "<dt>MCP servers</dt>" not in page.text
    assert (await parley.agent("mute"))["tools"] == []
    assert refused.status_code == 400 and "there is no tool" in refused.text
    assert "rogue" not in await _names(parley)


async def test_the_agent_page_shows_its_mcp_servers(parley: Harness) -> None:
    search = {"name": "search", "url": "https://mcp.example.com/mcp"}
    await parley.hire("scribe", mcp=[search, {"name": "notes", "command": "notes-server"}])
    async with signed_in(parley) as browser:
        page = await browser.get("/agents/scribe")
    assert (
        "<dt>MCP servers</dt><dd><code>notes</code> (notes-server), <code>search</code>"
        " (https://mcp.example.com/mcp)</dd>"
    ) in page.text


async def test_retire_now_forces_it_and_names_who_did(parley: Harness) -> None:
    await parley.hire("scribe")
    async with signed_in(parley) as browser:
        answer = await browser.post("/agents/scribe/retire", {"mode": "force"})
    agent = await parley.agent("scribe")
    assert answer.status_code == 303
    assert (agent["lifecycle"], agent["retired_reason"]) == ("retired", "retired by owner")


async def test_the_list_shows_each_agent_with_its_turns(parley: Harness) -> None:
    await parley.add_person("ada")
    bob = await parley.add_person("bob")
    await parley.hire("desk", human="ada")  # a person answers: its turn stays open
    await parley.hire("scribe", template=True)
    said = await parley.owner.post("/api/v1/conversations/desk/messages", json={"text": "hi"})
    async with parley.client(bob) as client:  # a second conversation waits: one session
        also = await client.post("/api/v1/conversations/desk/messages", json={"text": "hey"})
    assert (said.status_code, also.status_code) == (202, 202)
    async with signed_in(parley) as browser:

        async def counted() -> bool:  # the first turn starts in the background
            return _row_of("desk", (await browser.get("/agents")).text)[4:6] == ["1", "1"]

        assert await eventually(counted)
        page = await browser.get("/agents")
        active = await browser.get("/agents?lifecycle=active")
        retired = await browser.get("/agents?lifecycle=retired")
        bad = await browser.get("/agents?lifecycle=sleeping")
    assert _row_of("desk", page.text)[1:] == [
        "local",
        "<code>human</code>",
        "human (ada)",
        "1",
        "1",
        "0",
    ]
    assert '<th scope="col">Running</th>' in page.text and "(template)" in page.text
    assert "/agents/desk" in active.text and "/agents/desk" not in retired.text
    assert bad.status_code == 400 and "lifecycle is one of" in bad.text


async def test_a_member_reads_the_agents_without_the_owners_forms(parley: Harness) -> None:
    await parley.hire("scribe")
    token = await parley.add_person("ada")
    async with signed_in(parley, token) as browser:
        listed = await browser.get("/agents")
        shown = await browser.get("/agents/scribe")
        hire = await browser.post("/agents", {**HIRE, "name": "intruder"})
        malformed = await browser.post("/agents", {"max_sessions": "many"})
        retire = await browser.post("/agents/scribe/retire", {"mode": "force"})
        warn = await browser.post("/agents/scribe/warn", {"reason": "no"})
        note = await browser.post("/agents/scribe/memory", {"note": "Ada likes tea."})
    assert listed.status_code == 200 and "/agents/scribe" in listed.text
    assert 'method="post" action="/agents"' not in listed.text and "Hire" not in listed.text
    assert shown.status_code == 200 and "/agents/scribe/memory" in shown.text
    assert "/agents/scribe/retire" not in shown.text and "/agents/scribe/warn" not in shown.text
    assert [hire.status_code, retire.status_code, warn.status_code] == [403, 403, 403]
    assert "only an owner may hire agents" in hire.text
    # A form with faults of its own is refused as a member's, not read as a bad form.
    assert malformed.status_code == 403 and "only an owner may hire agents" in malformed.text
    assert "only an owner may retire agents" in retire.text
    assert note.status_code == 303  # any person may add to an agent's memory, as in the API
    assert await _names(parley) == ["scribe"]
    agent = await parley.agent("scribe")
    assert (agent["lifecycle"], agent["warnings"]) == ("active", 0)
    memory = await parley.owner.get("/api/v1/agents/scribe/memory")
    assert [note["note"] for note in items(memory.json())] == ["Ada likes tea."]


BAD_HIRES = [
    ({"name": ""}, "name is required"),
    ({"name": "  "}, "name is required"),
    ({"max_sessions": "0"}, "max sessions must be a whole number from 1 to 1000"),
    ({"max_sessions": str(10**9)}, "max sessions must be a whole number from 1 to 1000"),
    ({"max_sessions": "two"}, "max sessions must be a whole number"),
    ({"engram": "bad\x00byte"}, "engram contains a NUL byte"),
    ({"name": "scr\x00ibe"}, "name contains a NUL byte"),
    ({"name": "Scribe"}, "agent name &#39;Scribe&#39; is invalid"),
    ({"node": "nowhere"}, "nowhere"),
    ({"human": "on"}, "the person who answers is required"),
    ({"clone_lifetime": "2h"}, "only apply to a --template agent"),
]


@pytest.mark.parametrize(("fields", "says"), BAD_HIRES)
async def test_a_bad_hire_answers_a_page_saying_why_and_changes_nothing(
    parley: Harness, fields: dict[str, str], says: str
) -> None:
    async with signed_in(parley) as browser:
        answer = await browser.post("/agents", {**HIRE, **fields})
    assert 400 <= answer.status_code < 500, answer.text
    assert "<!doctype html>" in answer.text and says in answer.text
    assert await _names(parley) == []


async def test_warn_and_clone_from_the_agent_page(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.hire("researcher", template=True)
    async with signed_in(parley) as browser:
        template = await browser.get("/agents/researcher")
        warned = await browser.post("/agents/scribe/warn", {"reason": "late minutes"})
        page = await browser.get("/agents/scribe")
        empty = await browser.post("/agents/scribe/warn", {"reason": " "})
        cloned = await browser.post("/agents/researcher/clone", {"name": "r-1", "lifetime": "2h"})
    assert "Clone" in template.text and warned.status_code == 303
    assert empty.status_code == 400 and "a warning needs a reason" in empty.text
    assert cloned.headers["location"] == "/agents/r-1"
    assert "late minutes" in page.text and "Warned scribe (1 warning(s))." in page.text
    clone = await parley.agent("r-1")
    assert (clone["clone_of"], clone["lifecycle"]) == ("researcher", "active")


async def test_an_owner_adds_a_person_and_sees_the_token_once(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        added = await browser.post("/people", {"name": "ada", "role": "member"})
        listed = await browser.get("/people")
        again = await browser.post("/people", {"name": "ada", "role": "member"})
        empty = await browser.post("/people", {"name": "", "role": "member"})
        bad_role = await browser.post("/people", {"name": "bob", "role": "king"})
    assert added.status_code == 201 and "location" not in added.headers
    assert added.headers["cache-control"] == "no-store"
    found = re.search(r'id="new-token" class="token" value="([^"]+)"', added.text)
    assert found is not None
    token = found.group(1)
    assert token not in listed.text and "ada" in listed.text
    async with parley.client(token) as ada:
        me = await ada.get("/api/v1/me")
    assert me.json()["name"] == "ada" and me.json()["role"] == "member"
    assert again.status_code == 409 and "already exists" in again.text
    assert empty.status_code == 400 and "name is required" in empty.text
    assert bad_role.status_code == 400 and "role is one of" in bad_role.text
    people = await parley.owner.get("/api/v1/people")
    assert [person["name"] for person in items(people.json())] == ["ada", "owner"]


async def test_a_member_reissues_only_their_own_token(parley: Harness) -> None:
    old = await parley.add_person("ada")
    await parley.add_person("bob")
    async with signed_in(parley, old) as browser:
        listed = await browser.get("/people")
        others = await browser.post("/people/bob/token")
        add = await browser.post("/people", {"name": "eve"})
        nameless = await browser.post("/people", {"role": "nobody"})
        mine = await browser.post("/people/ada/token")
    assert "/people/ada/token" in listed.text and "/people/bob/token" not in listed.text
    assert 'action="/people"' not in listed.text
    assert others.status_code == 403 and add.status_code == 403
    assert nameless.status_code == 403 and "only an owner may add people" in nameless.text
    assert mine.status_code == 200 and "sign in again" in mine.text
    found = re.search(r'id="new-token" class="token" value="([^"]+)"', mine.text)
    assert found is not None
    async with parley.client(found.group(1)) as ada:
        assert (await ada.get("/api/v1/me")).status_code == 200
    async with parley.client(old) as stale:
        assert (await stale.get("/api/v1/me")).status_code == 401
    people = await parley.owner.get("/api/v1/people")
    assert [person["name"] for person in items(people.json())] == ["ada", "bob", "owner"]


async def test_the_nodes_page_shows_the_mesh_and_asks_a_node(parley: Harness) -> None:
    await parley.hire("scribe")
    async with signed_in(parley) as browser:
        listed = await browser.get("/nodes")
        asked = await browser.post("/nodes/local/ask", {"text": "How full is the disk?"})
        empty = await browser.post("/nodes/local/ask", {"text": ""})
        exchanges = await browser.get("/nodes/local/exchanges")
        missing = await browser.get("/nodes/nowhere/exchanges")
    assert listed.status_code == 200 and "online" in listed.text
    assert 'href="/nodes/local/exchanges"' in listed.text
    assert 'action="/nodes/local/ask"' in listed.text
    assert asked.status_code == 303 and asked.headers["location"] == "/nodes/local/exchanges"
    assert empty.status_code == 400
    assert "How full is the disk?" in exchanges.text
    assert missing.status_code == 404
    exchanged = await parley.owner.get("/api/v1/nodes/local/exchanges")
    assert [m["body"] for m in items(exchanged.json())][-1] == "How full is the disk?"


async def test_a_node_s_exchanges_read_oldest_first_as_a_chat_does(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        for text in ("first question", "second question"):
            assert (await browser.post("/nodes/local/ask", {"text": text})).status_code == 303
        page = (await browser.get("/nodes/local/exchanges")).text
    first, second = page.index("first question"), page.index("second question")
    assert first < second < page.index('action="/nodes/local/ask"')  # the box below, as in a chat
