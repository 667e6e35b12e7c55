"""Editing an agent in a real browser (htmx on): a refused change comes back with the message
beside the brain's field and the engram as it was typed; corrected, it is saved and recorded."""

from __future__ import annotations

from playwright.sync_api import Browser, Page, expect

from tests.served import Served
from tests.web.browser import chromium, page, sign_in, site
from tests.web.test_axe_in_browser import readable, violations
from tests.web.test_work_in_browser import api

__all__ = ["chromium", "page", "site"]  # fixtures

TYPED = "You keep the minutes.\nIn bullet points, always."


def test_a_refused_change_keeps_what_was_typed_and_the_corrected_one_is_saved(
    chromium: Browser, site: Served
) -> None:
    # The page's policy allows only its own scripts; axe is put in by the test.
    page = chromium.new_context(bypass_csp=True).new_page()
    page.set_default_timeout(15_000)
    with api(site) as owner:
        assert owner.post("/agents", json={"name": "scribe", "node": "local"}).status_code == 201
    sign_in(page, site)
    page.goto(site.url + "/agents/scribe")
    page.get_by_label("Engram (its system prompt)").fill(TYPED)
    page.get_by_label("Kind").select_option("openai")
    page.get_by_label("Its file, model or command line").fill("")
    page.get_by_role("button", name="Save the settings").click()
    beside = page.locator("#error-brain")
    expect(beside).to_contain_text("needs a model name")
    expect(page.get_by_label("Engram (its system prompt)")).to_have_value(TYPED)
    expect(page.get_by_label("Kind")).to_have_value("openai")
    described = page.get_by_label("Its file, model or command line").get_attribute(
        "aria-describedby"
    )
    assert described is not None and "error-brain" in described.split()
    assert readable("the refused form", violations(page)) == []
    page.get_by_label("Its file, model or command line").fill("gpt-4o-mini")
    page.get_by_label("Accept a model brain whose API key is missing").check()
    page.get_by_role("button", name="Save the settings").click()
    expect(page.locator(".notice")).to_contain_text("Saved")
    with api(site) as owner:
        agent = owner.get("/agents/scribe").json()
    assert (agent["engram"], agent["brain"]) == (TYPED, "openai:gpt-4o-mini")
    expect(page.locator("#error-brain")).to_have_count(0)


def test_a_member_finds_no_settings_form_and_a_post_made_by_hand_is_refused(
    page: Page, site: Served
) -> None:
    with api(site) as owner:
        assert owner.post("/agents", json={"name": "scribe", "node": "local"}).status_code == 201
        token = owner.post("/people", json={"name": "mia"}).json()["token"]
    sign_in(page, site, token)
    page.goto(site.url + "/agents/scribe")
    expect(page.get_by_role("heading", name="scribe")).to_be_visible()
    expect(page.get_by_role("button", name="Save the settings")).to_have_count(0)
    expect(page.get_by_label("Engram (its system prompt)")).to_have_count(0)
    form_token = page.locator("input[name=form_token]").first.get_attribute("value")
    assert form_token
    forged = page.request.post(
        site.url + "/agents/scribe/settings",
        form={"form_token": form_token, "engram": "mine", "brain_kind": "offline"},
        headers={"Origin": site.url, "Referer": site.url + "/agents/scribe"},
    )
    assert forged.status == 403 and "only an owner may change agents" in forged.text()
    with api(site) as owner:
        assert owner.get("/agents/scribe").json()["engram"] == ""
