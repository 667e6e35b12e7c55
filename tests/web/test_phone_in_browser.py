"""Every page on a phone: at 390 px wide, in Chromium, no page is wider than the screen (tables
scroll inside themselves, long words wrap, the header's navigation wraps onto lines), with data
in its lists: agents, a task and its subtask, runs, a chat with long words, channel accounts;
as an owner and as a member. And the page follows the system's dark scheme, with its icon."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize

from tests.served import Served
from tests.web.browser import chromium, sign_in, site
from tests.web.test_in_browser import api

__all__ = ["chromium", "site"]  # fixtures

PHONE: ViewportSize = {"width": 390, "height": 844}
LONG = "a-very-long-unbroken-word-" * 8  # what a URL or a path in a message looks like
BOSS = (
    "rules: [{when: {text: '^part of'}, do: [{complete: 'done " + LONG + "'}]},"
    " {when: {text: '^subtask'}, do: []}]\n"
    "otherwise: [{spawn: {agent: helper-with-a-long-name, text: 'part of {text}'}},"
    " {reply: 'on it " + LONG + "'}]\n"
)
PAGES = [
    "/", "/chat/boss-with-a-long-name", "/tasks", "/tasks/{task}", "/roots/{task}", "/runs",
    "/runs?state=finished", "/runs/{run}", "/turns", "/agents", "/agents/boss-with-a-long-name",
    "/nodes", "/nodes/local/exchanges", "/people", "/connections", "/channels", "/a2a-access",
]  # fmt: skip
OWNERS_ONLY = {"/connections", "/channels", "/a2a-access", "/people"}


@pytest.fixture
def phone(chromium: Browser) -> Page:
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    return context.new_page()


def _with_data(site: Served, tmp_path: Path) -> dict[str, int]:
    rules = tmp_path / "boss.yaml"
    rules.write_text(BOSS)
    with api(site) as owner:
        for name in ("boss-with-a-long-name", "helper-with-a-long-name"):
            hired = owner.post("/agents", json={"name": name, "node": "local",
                                                "brain": f"scripted:{rules}"})  # fmt: skip
            assert hired.status_code == 201, hired.text
        task = owner.post("/tasks", json={"agent": "boss-with-a-long-name",
                                          "text": f"the job {LONG}"}).json()  # fmt: skip
        owner.post("/conversations/boss-with-a-long-name/messages", json={"text": LONG})
        owner.put("/channels/web/accounts/home", json={"default_agent": "boss-with-a-long-name"})
        owner.put("/channels/discord/accounts/" + "guild" * 8, json={"default_agent": None})
        runs = owner.get("/runs", params={"topic": task["id"]}).json()["items"]
    return {"task": task["id"], "run": runs[-1]["id"]}


def _too_wide(page: Page, url: str) -> int | None:
    page.goto(url)
    page.wait_for_load_state("load")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert isinstance(width, int)
    return width if width > PHONE["width"] else None


@pytest.mark.parametrize("person", ["owner", "member"])
def test_no_page_is_wider_than_a_phone(
    phone: Page, site: Served, tmp_path: Path, person: str
) -> None:
    ids = _with_data(site, tmp_path)
    token = None
    if person == "member":
        with api(site) as owner:
            token = owner.post("/people", json={"name": "mia"}).json()["token"]
    sign_in(phone, site, token)
    wide = {}
    for path in PAGES:
        if person == "member" and path in OWNERS_ONLY:
            continue
        found = _too_wide(phone, site.url + path.format(**ids))
        if found is not None:
            wide[path] = found
    assert wide == {}


def test_the_page_follows_a_dark_system_scheme_and_has_an_icon(
    chromium: Browser, site: Served
) -> None:
    seen = {}
    for scheme in ("light", "dark"):
        context = chromium.new_context(color_scheme=scheme)
        page = context.new_page()
        sign_in(page, site)
        seen[scheme] = page.evaluate(
            "[getComputedStyle(document.documentElement).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
        icon = page.locator("link[rel=icon]").get_attribute("href")
        context.close()
    assert _lightness(seen["light"][0]) > 0.8 > 0.2 > _lightness(seen["dark"][0])
    assert _lightness(seen["dark"][1]) > 0.8  # light text on the dark ground
    assert icon is not None
    answer = httpx.get(site.url + icon)
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/svg+xml"


def _lightness(css_color: str) -> float:
    """0 (black) to 1 (white), from ``rgb(r, g, b)``."""
    red, green, blue = (int(part) for part in css_color[4:-1].split(",")[:3])
    return (red + green + blue) / (3 * 255)
