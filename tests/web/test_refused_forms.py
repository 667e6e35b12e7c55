"""Every form of the page, refused for what was typed in it, comes back to its page as it was
filled in: the message once at the top and beside the field it names, the text kept; nothing is
stored. A refusal of who sent it (403), or a post from no page (a script), is still a page of
its own."""

from __future__ import annotations

import re

import pytest

from tests.support import Harness
from tests.web.support import signed_in

LONG = "x" * 70
# page, action, fields posted, the field the message is beside (None: at the top only), what was
# typed and must be shown again
REFUSED = [
    ("/people", "/people", {"name": "", "role": "owner"}, "name", 'value="owner" selected'),
    ("/connections", "/connections/invite", {"name": "peer-b", "expires": "soon"}, "expires",
     'value="peer-b"'),
    ("/connections", "/connections/accept", {"code": "not-a-code", "name": "peer-c"}, "code",
     "not-a-code"),
    ("/a2a-access", "/a2a-access/expose", {"agent": "nobody-here"}, "agent", 'value="nobody-here"'),
    ("/a2a-access", "/a2a-access/clients", {"name": LONG}, None, f'value="{LONG}"'),
    ("/agents/scribe", "/agents/scribe/warn", {"reason": " "}, "reason", None),
    ("/agents/tmpl", "/agents/tmpl/clone", {"name": "copy", "lifetime": "forever"}, "lifetime",
     'value="forever"'),
    ("/tasks", "/tasks", {"agent": "nobody-here", "text": "the budget, please"}, "agent",
     "the budget, please"),
]  # fmt: skip


@pytest.mark.parametrize(("page", "action", "fields", "field", "kept"), REFUSED)
async def test_a_refused_form_comes_back_to_its_page_as_it_was_filled_in(
    parley: Harness,
    page: str,
    action: str,
    fields: dict[str, str],
    field: str | None,
    kept: str | None,
) -> None:
    await parley.hire("scribe", brain="offline")
    await parley.hire("tmpl", brain="offline", template=True)
    before = (await parley.owner.get("/api/v1/people")).json()
    async with signed_in(parley) as browser:
        answer = await browser.post(action, fields, page=page)
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == page
        shown = (await browser.get(page)).text
    alert = re.search(r'<p class="error" role="alert">Not done: (.*?)</p>', shown, re.S)
    assert alert is not None, shown
    if field is not None:
        beside = re.search(rf'<p class="field-error" id="error-{field}">(.*?)</p>', shown, re.S)
        assert beside is not None and beside.group(1) == alert.group(1)
    if kept is not None:
        assert kept in shown
    assert (await parley.owner.get("/api/v1/people")).json() == before


async def test_a_route_naming_nothing_and_a_post_from_no_page_stay_pages_of_their_own(
    parley: Harness,
) -> None:
    async with signed_in(parley) as browser:
        unknown = await browser.post("/agents/nobody/settings", {"engram": "x"}, page="/agents")
        scripted = await browser.post("/people", {"name": ""})  # no page names it
        elsewhere = await browser.http.post(
            "/people",
            data={"form_token": browser.form_token, "name": ""},
            headers={"Origin": "http://parley", "Referer": "http://evil.example/people"},
        )
    assert unknown.status_code == 404 and "no agent named" in unknown.text
    assert scripted.status_code == 400 and "name is required" in scripted.text
    assert elsewhere.status_code == 400  # a page of another site is not gone back to
