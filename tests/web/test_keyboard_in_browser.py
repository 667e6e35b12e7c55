"""The page with a keyboard, in Chromium: the header's navigation folds into a menu on a phone
(a <details>, no script) that Tab and Enter open, and is a plain row of links on a desktop;
whatever Tab reaches shows a focus ring, in the light and the dark scheme."""

from __future__ import annotations

from typing import Literal

from playwright.sync_api import Browser, Page, expect

from tests.served import Served
from tests.web.browser import chromium, sign_in, site

__all__ = ["chromium", "site"]  # fixtures

Scheme = Literal["light", "dark"]
RING = "(() => { const s = getComputedStyle(document.activeElement);"\
       " return [s.outlineStyle, s.outlineWidth]; })()"  # fmt: skip


def _signed_in(chromium: Browser, site: Served, width: int, scheme: Scheme = "light") -> Page:
    context = chromium.new_context(viewport={"width": width, "height": 800}, color_scheme=scheme)
    context.set_default_timeout(15_000)
    page = context.new_page()
    sign_in(page, site)
    return page


def test_the_navigation_folds_into_a_menu_on_a_phone(chromium: Browser, site: Served) -> None:
    phone = _signed_in(chromium, site, 390)
    phone.goto(site.url + "/tasks")
    expect(phone.get_by_role("link", name="Agents")).to_have_count(0)  # hidden, to all
    phone.keyboard.press("Tab")  # the skip link
    phone.keyboard.press("Tab")
    menu = phone.locator("summary", has_text="Menu")
    expect(menu).to_be_focused()
    phone.keyboard.press("Enter")
    expect(phone.get_by_role("link", name="Agents")).to_be_visible()
    expect(phone.get_by_role("link", name="Tasks", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    phone.keyboard.press("Tab")
    expect(phone.get_by_role("link", name="Chat", exact=True)).to_be_focused()
    phone.get_by_role("link", name="Agents").click()
    expect(phone).to_have_url(site.url + "/agents")
    expect(phone.get_by_role("link", name="Agents")).to_have_count(0)  # folded on the new page
    phone.context.close()

    wide = _signed_in(chromium, site, 1280)
    wide.goto(site.url + "/tasks")
    expect(wide.locator("summary", has_text="Menu")).to_be_hidden()
    for name in ("Chat", "Tasks", "Agents", "A2A"):
        expect(wide.get_by_role("link", name=name, exact=True)).to_be_visible()
    expect(wide.get_by_role("link", name="Tasks", exact=True)).to_have_attribute(
        "aria-current", "page"
    )
    wide.context.close()


def test_what_the_keyboard_reaches_shows_a_focus_ring(chromium: Browser, site: Served) -> None:
    """Tab through the header (skip link, links, Sign out) and the task filter's form (select,
    checkbox, button), and a phone's menu button: each focused control has an outline."""
    bare: dict[str, list[str]] = {}
    for scheme in ("light", "dark"):
        page = _signed_in(chromium, site, 1280, scheme)
        page.goto(site.url + "/tasks")
        page.locator("body").focus()
        reached = []
        for _ in range(30):  # to the page's end: its last control, then the browser's own
            page.keyboard.press("Tab")
            what = page.evaluate("document.activeElement.outerHTML.slice(0, 60)")
            if what.startswith("<body"):
                break
            reached.append(what)
            style, width = page.evaluate(RING)
            if style == "none" or width == "0px":
                bare.setdefault(scheme, []).append(what)
        assert any("Sign out" in r for r in reached) and any("<select" in r for r in reached)
        page.set_viewport_size({"width": 390, "height": 800})
        page.locator("summary", has_text="Menu").focus()
        style, width = page.evaluate(RING)
        if style == "none" or width == "0px":
            bare.setdefault(scheme, []).append("the menu's summary")
        page.context.close()
    assert bare == {}
