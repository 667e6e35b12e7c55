"""Every page on a phone: at 390 px wide, in Chromium, no page is wider than the screen (tables
scroll inside themselves, long words wrap, the header's navigation wraps onto lines), with data
in its lists: agents, a task and its subtask, runs, a chat with long words, channel accounts;
as an owner and as a member. And the page follows the system's dark scheme, with its icon."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.served import Served
from tests.web.browser import chromium, shot, sign_in, site
from tests.web.pages import member_token, paths, with_data

__all__ = ["chromium", "site"]  # fixtures

PHONE: ViewportSize = {"width": 390, "height": 844}


@pytest.fixture
def phone(chromium: Browser) -> Page:
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    context.set_default_timeout(15_000)
    return context.new_page()


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
    ids = with_data(site, tmp_path)
    sign_in(phone, site, member_token(site) if person == "member" else None)
    wide = {}
    for path in paths(ids, person):
        found = _too_wide(phone, site.url + path)
        if found is not None:
            wide[path] = found
        if path.startswith("/chat/") and person == "owner":
            expect(phone.get_by_role("link", name="Agents")).to_have_count(0)  # in the menu
            shot(phone, "web-phone.png", tmp_path, full_page=False)
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
