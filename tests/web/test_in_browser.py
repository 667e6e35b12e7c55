"""The page in a real browser: sign in, chat with a reply that streams in and is stopped, and
a member who sees neither an owner's conversation nor the owner's buttons."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.served import Served
from tests.web.browser import chromium, page, shot, sign_in, site

__all__ = ["chromium", "page", "site"]  # fixtures

SLOW = """\
rules:
  - when: {text: "(?i)slowly"}
    do:
      - reply: "Let me think about that…"
      - sleep: 30
      - reply: "Done thinking."
otherwise:
  - reply: "You said: {text}"
"""


def api(site: Served, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token or site.owner_token}"}
    return httpx.Client(base_url=site.url + "/api/v1", headers=headers, timeout=15)


def hire_scripted(site: Served, name: str, rules: Path) -> None:
    with api(site) as owner:
        answer = owner.post(
            "/agents", json={"name": name, "node": "local", "brain": f"scripted:{rules}"}
        )
    assert answer.status_code == 201, answer.text


def test_sign_in_and_out(page: Page, site: Served) -> None:
    page.goto(site.url + "/runs")
    expect(page).to_have_url(site.url + "/signin?then=/runs")
    page.get_by_label("Your API token").fill("pt_wrong")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not known here")
    sign_in(page, site)
    assert site.owner_token not in page.url
    cookies = page.context.cookies()
    (session,) = [c for c in cookies if c["name"] == "parley_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict"
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Your API token")).to_be_visible()
    page.goto(site.url + "/")
    expect(page).to_have_url(site.url + "/signin")


def test_a_reply_streams_in_and_stop_stops_the_turn(
    page: Page, site: Served, tmp_path: Path
) -> None:
    rules = tmp_path / "thinker.yaml"
    rules.write_text(SLOW)
    hire_scripted(site, "thinker", rules)
    sign_in(page, site)
    page.goto(site.url + "/chat/thinker")
    page.get_by_label("Message to thinker").fill("hello there")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".messages")).to_contain_text("You said: hello there")

    page.get_by_label("Message to thinker").fill("think slowly")
    page.get_by_role("button", name="Send").click()
    streaming = page.locator(".turn .streaming")
    expect(streaming).to_contain_text("Let me think about that…")  # while the turn still runs
    shot(page, "web-chat.png", tmp_path)
    page.get_by_role("button", name="Stop").click()
    # The run's end, and (from its node just after) what it had said, kept and marked.
    expect(page.locator(".messages .ended:not(.cut-short)")).to_contain_text("stopped")
    expect(page.locator(".messages .ended.cut-short")).to_contain_text(
        "stopped — what it had said so far is kept"
    )
    expect(page.locator(".messages")).to_contain_text("Let me think about that…")
    expect(page.locator(".turn")).to_have_count(0)
    with api(site) as owner:
        runs = owner.get("/runs", params={"agent": "thinker"}).json()["items"]
    assert sorted(run["state"] for run in runs) == ["finished", "stopped"]


def test_text_said_from_elsewhere_shows_on_the_open_page(
    page: Page, site: Served, tmp_path: Path
) -> None:
    rules = tmp_path / "echo.yaml"
    rules.write_text(SLOW)
    hire_scripted(site, "echo", rules)
    sign_in(page, site)
    page.goto(site.url + "/chat/echo")
    expect(page.locator(".messages")).to_contain_text("Nothing said yet")
    with api(site) as owner:  # as `parley say echo …` does
        said = owner.post("/conversations/echo/messages", json={"text": "from the command line"})
    assert said.status_code == 202
    expect(page.locator(".messages")).to_contain_text("You said: from the command line")


def test_a_member_sees_neither_an_owners_conversation_nor_owner_buttons(
    page: Page, site: Served, tmp_path: Path
) -> None:
    rules = tmp_path / "echo.yaml"
    rules.write_text(SLOW)
    hire_scripted(site, "echo", rules)
    with api(site) as owner:
        owner.post("/conversations/echo/messages", json={"text": "owner's secret plan"})
        member = owner.post("/people", json={"name": "mia", "role": "member"}).json()["token"]
        conversation = owner.get("/conversations").json()["items"][0]["id"]
    sign_in(page, site, member)
    page.goto(site.url + "/chat/echo")
    expect(page.locator("main")).not_to_contain_text("owner's secret plan")
    answer = page.goto(site.url + f"/roots/{conversation}")
    assert answer is not None and answer.status == 404
    page.goto(site.url + "/agents")
    expect(page.get_by_role("button", name="Hire")).to_have_count(0)
    # The hire form posted by hand, with the member's own form token, is refused too.
    token = page.locator('input[name="form_token"]').first.get_attribute("value")
    posted = page.request.post(
        site.url + "/agents",
        form={"form_token": token or "", "name": "sneaky", "node": "local"},
        headers={"Origin": site.url},
    )
    assert posted.status == 403
    with api(site) as owner:
        assert owner.get("/agents/sneaky").status_code == 404


def test_the_chat_is_usable_with_the_keyboard_alone(
    page: Page, site: Served, tmp_path: Path
) -> None:
    rules = tmp_path / "echo.yaml"
    rules.write_text(SLOW)
    hire_scripted(site, "echo", rules)
    page.goto(site.url + "/chat/echo")
    page.keyboard.press("Tab")  # the skip link first
    expect(page.get_by_role("link", name="Skip to the content")).to_be_focused()
    page.get_by_label("Your API token").focus()
    page.keyboard.type(site.owner_token)
    page.keyboard.press("Enter")
    expect(page).to_have_url(site.url + "/chat/echo")
    page.get_by_label("Message to echo").focus()
    page.keyboard.type("typed, not clicked")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Send")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text("You said: typed, not clicked")


def test_a_reply_on_the_open_chat_is_announced_once(
    page: Page, site: Served, tmp_path: Path
) -> None:
    """The chat's live part is redrawn whole, so it is no live region (a screen reader would read
    the whole chat at each change); the page's status region says what is new in it: the agent's
    reply, not the person's own text."""
    rules = tmp_path / "echo.yaml"
    rules.write_text(SLOW)
    hire_scripted(site, "echo", rules)
    sign_in(page, site)
    page.goto(site.url + "/chat/echo")
    expect(page.locator("#chat")).not_to_have_attribute("aria-live", re.compile(".*"))
    announce = page.get_by_role("status")
    expect(announce).to_have_text("")
    with api(site) as owner:
        owner.post("/conversations/echo/messages", json={"text": "from the command line"})
    expect(announce).to_contain_text("echo")
    expect(announce).to_contain_text("You said: from the command line")
    assert not announce.inner_text().startswith("owner")
