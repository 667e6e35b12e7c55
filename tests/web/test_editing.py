"""Editing in place: an owner changes on an agent's page what ``parley agent set`` changes
(engram, brain by kind then argument, max sessions, tools, variables, MCP servers), removes
memory notes, and sets a node's engram, each recorded as the API's change is. A refused form
comes back to its page with the message beside its field and what was typed kept, the store
unchanged; members see no such form, and their hand-made posts are refused."""

from __future__ import annotations

import html
import re

import pytest

from tests.support import Harness, items
from tests.web.support import Browser, signed_in

PAGE = "/agents/scribe"
ENGRAM = "You keep the minutes,\nshort & plain <always>."


async def _settings(browser: Browser, **fields: str) -> tuple[int, str]:
    """The settings form as the page fills it (its current values), changed by ``fields``;
    the answer's status and the page it leads to."""
    form = {"engram": "", "brain_kind": "offline", "brain_argument": "", "max_sessions": "1"}
    answer = await browser.post(f"{PAGE}/settings", form | fields, page=PAGE)
    return answer.status_code, (await browser.get(answer.headers["location"])).text


def _field(page: str, tag: str, name: str) -> str:
    """The value a field of the settings form shows (a textarea's text, an input's value)."""
    if tag == "textarea":
        found = re.search(rf'<textarea id="edit-{name}"[^>]*>(.*?)</textarea>', page, re.S)
    else:
        found = re.search(rf'<input id="edit-{name}"[^>]*value="([^"]*)"', page)
    assert found is not None, page
    return html.unescape(found.group(1))


async def test_an_owner_changes_engram_brain_and_sessions_and_each_change_is_recorded(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline")
    async with signed_in(parley) as browser:
        shown = (await browser.get(PAGE)).text
        assert 'action="/agents/scribe/settings"' in shown
        assert '<option value="anthropic">' in shown
        assert '<option value="offline" selected>' in shown
        status, page = await _settings(
            browser, engram=ENGRAM, brain_kind="openai", brain_argument="gpt-4o-mini",
            allow_missing_key="on", max_sessions="3",
        )  # fmt: skip
    assert status == 303 and "Saved: its next turn works with the change." in page
    agent = await parley.agent("scribe")
    assert (agent["engram"], agent["brain"], agent["max_sessions"]) == (
        ENGRAM, "openai:gpt-4o-mini", 3)  # fmt: skip
    changes = items((await parley.owner.get("/api/v1/agents/scribe/changes")).json())
    assert {(c["setting"], c["new"]) for c in changes} == {
        ("engram", ENGRAM), ("brain", "openai:gpt-4o-mini"), ("max_sessions", "3")}  # fmt: skip
    assert _field(page, "textarea", "engram") == ENGRAM  # the page shows what is now
    assert _field(page, "input", "brain-argument") == "gpt-4o-mini"


async def test_a_form_holding_the_settings_as_they_are_changes_nothing_and_says_so(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline", engram="Be brief.")
    async with signed_in(parley) as browser:
        status, page = await _settings(browser, engram="Be brief.")
    assert status == 303 and "Nothing changed" in page
    assert items((await parley.owner.get("/api/v1/agents/scribe/changes")).json()) == []


REFUSED = [
    ({"brain_kind": "openai", "brain_argument": ""}, "brain", "needs a model name"),
    ({"brain_kind": "psychic"}, "brain", "is not a brain spec"),
    ({"max_sessions": "0"}, "max_sessions", "from 1 to 1000"),
    ({"engram": "x" * 20_001}, "engram", "an engram holds at most"),
]


@pytest.mark.parametrize(("fields", "field", "said"), REFUSED)
async def test_a_refused_settings_form_comes_back_with_the_message_beside_its_field_and_what_was_typed(  # noqa: E501
    parley: Harness, fields: dict[str, str], field: str, said: str
) -> None:
    await parley.hire("scribe", brain="offline", engram="Be brief.")
    typed = {"engram": "A new engram I took care to write."} | fields
    async with signed_in(parley) as browser:
        status, page = await _settings(browser, **typed)
    assert status == 303
    beside = re.search(rf'<p class="field-error" id="error-{field}">(.*?)</p>', page, re.S)
    assert beside is not None and said in html.unescape(beside.group(1)), page
    assert f'aria-invalid="true" aria-describedby="error-{field}' in page
    assert 'role="alert">Not done: ' in page  # and once at the top
    assert _field(page, "textarea", "engram") == typed["engram"]  # kept, not the stored one
    agent = await parley.agent("scribe")
    assert (agent["engram"], agent["brain"], agent["max_sessions"]) == ("Be brief.", "offline", 1)
    async with signed_in(parley) as again:  # shown once: the next page is the stored agent
        assert _field((await again.get(PAGE)).text, "textarea", "engram") == "Be brief."


async def test_a_refused_form_is_shown_only_to_the_person_who_sent_it_and_only_once(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline")
    async with signed_in(parley) as browser, signed_in(parley) as other:
        await _settings(browser, engram="mine", brain_kind="psychic")
        seen_by_other = (await other.get(PAGE)).text
        reloaded = (await browser.get(PAGE)).text
    assert "Not done" not in seen_by_other and "mine" not in seen_by_other
    assert "Not done" not in reloaded and "mine" not in reloaded


async def test_tools_and_those_that_ask_first_are_ticked_and_a_wrong_one_comes_back(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline")
    async with signed_in(parley) as browser:
        changed = await browser.post(
            f"{PAGE}/tools", [("tools", "read"), ("tools", "write"), ("ask", "write")], page=PAGE
        )
        wrong = await browser.post(
            f"{PAGE}/tools", [("tools", "read"), ("ask_more", "nosuch.tool")], page=PAGE
        )
        page = (await browser.get(wrong.headers["location"])).text
    assert changed.status_code == 303
    agent = await parley.agent("scribe")
    assert (agent["tools"], agent["ask"]) == (["read", "write"], ["write"])
    assert 'id="error-ask"' in page and "nosuch.tool" in page
    assert re.search(r'name="tools" value="write"\s*>', page)  # unticked, as it was sent


async def test_variables_and_mcp_servers_are_added_and_removed(parley: Harness) -> None:
    await parley.hire("scribe", brain="offline")
    async with signed_in(parley) as browser:
        await browser.post(f"{PAGE}/variables", {"variable": "API_KEY", "value": "s3cret"})
        await browser.post(f"{PAGE}/variables", {"variable": "HOME_URL", "from_server": "on"})
        await browser.post(f"{PAGE}/mcp", {"server": "search", "target": "https://mcp.example/m"})
        page = (await browser.get(PAGE)).text
        between = await parley.agent("scribe")
        await browser.post(f"{PAGE}/variables/API_KEY/remove")
        await browser.post(f"{PAGE}/mcp/search/remove")
        bad = await browser.post(f"{PAGE}/variables", {"variable": "PARLEY_X", "value": "1"}, PAGE)
        refused = (await browser.get(bad.headers["location"])).text
    assert (between["env"], between["env_from_server"]) == (["API_KEY"], ["HOME_URL"])
    assert [server["name"] for server in between["mcp"]] == ["search"]
    assert "API_KEY" in page and "s3cret" not in page  # a value is never shown back
    after = await parley.agent("scribe")
    assert (after["env"], after["env_from_server"], after["mcp"]) == ([], ["HOME_URL"], [])
    assert 'id="error-env"' in refused and 'value="PARLEY_X"' in refused


async def test_memory_notes_are_removed_by_an_owner_or_their_writer_and_the_removal_recorded(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline")
    mia = await parley.add_person("mia")
    async with signed_in(parley, mia) as member, signed_in(parley) as owner:
        await member.post(f"{PAGE}/memory", {"note": "Mia takes tea."})
        await owner.post(f"{PAGE}/memory", {"note": "The owner's rule."})
        notes = items((await parley.owner.get("/api/v1/agents/scribe/memory")).json())
        mine, owners = (next(n["id"] for n in notes if n["note"] == text)
                        for text in ("Mia takes tea.", "The owner's rule."))  # fmt: skip
        page = (await member.get(PAGE)).text
        refused = await member.post(f"{PAGE}/memory/{owners}/remove")
        removed = await member.post(f"{PAGE}/memory/{mine}/remove")
        missing = await owner.post(f"{PAGE}/memory/{mine}/remove")
    assert f"/memory/{mine}/remove" in page and f"/memory/{owners}/remove" not in page
    assert refused.status_code == 403 and removed.status_code == 303
    assert missing.status_code == 404
    left = items((await parley.owner.get("/api/v1/agents/scribe/memory")).json())
    assert [note["note"] for note in left] == ["The owner's rule."]
    changes = items((await parley.owner.get("/api/v1/agents/scribe/changes")).json())
    assert [(c["setting"], c["old"], c["new"]) for c in changes] == [
        ("memory", "Mia takes tea.", None)]  # fmt: skip


async def test_a_member_sees_no_settings_form_and_a_hand_made_post_changes_nothing(
    parley: Harness,
) -> None:
    await parley.hire("scribe", brain="offline", engram="Be brief.")
    mia = await parley.add_person("mia")
    async with signed_in(parley, mia) as member:
        page = (await member.get(PAGE)).text
        posts = [
            await member.post(f"{PAGE}/settings", {"engram": "mine", "max_sessions": "x"}, PAGE),
            await member.post(f"{PAGE}/tools", {"tools": "run"}, PAGE),
            await member.post(f"{PAGE}/variables", {"variable": "A", "value": "1"}, PAGE),
            await member.post(f"{PAGE}/mcp", {"server": "s", "target": "cat"}, PAGE),
            await member.post("/nodes/local/engram", {"engram": "mine"}, "/nodes/local/exchanges"),
        ]
        node_page = (await member.get("/nodes/local/exchanges")).text
    assert "/settings" not in page and "/variables" not in page and "/mcp" not in page
    assert 'action="/nodes/local/engram"' not in node_page
    assert [post.status_code for post in posts] == [403] * 5  # refused, not sent back to a form
    agent = await parley.agent("scribe")
    assert (agent["engram"], agent["tools"], agent["env"], agent["mcp"]) == (
        "Be brief.", ["read", "list", "find"], [], [])  # fmt: skip


async def test_an_owner_sets_a_node_s_engram_on_its_page(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        saved = await browser.post("/nodes/local/engram", {"engram": "You tend this box."})
        too_long = await browser.post(
            "/nodes/local/engram", {"engram": "y" * 20_001}, "/nodes/local/exchanges"
        )
        page = (await browser.get(too_long.headers["location"])).text
    assert saved.status_code == 303
    node = await parley.owner.get("/api/v1/nodes/local")
    assert node.json()["engram"] == "You tend this box."
    assert 'id="error-engram"' in page and "y" * 20_001 in page


async def test_a_refused_hire_and_a_refused_message_keep_what_was_typed(parley: Harness) -> None:
    await parley.hire("scribe", brain="offline")
    async with signed_in(parley) as browser:
        hire = await browser.post(
            "/agents", {"name": "scribe", "node": "local", "engram": "My careful engram."},
            page="/agents",
        )  # fmt: skip
        hire_page = (await browser.get(hire.headers["location"])).text
        said = await browser.post("/chat/scribe", {"text": "z" * 100_001}, page="/chat/scribe")
        chat_page = (await browser.get(said.headers["location"])).text
    assert hire.status_code == 303 and "Not done: " in hire_page
    assert "My careful engram." in hire_page and 'value="scribe"' in hire_page
    assert said.status_code == 303 and "z" * 100_001 in chat_page and "Not done: " in chat_page
