"""The task page's box in a real browser (issue 30, point 2): text typed into it reaches the
agent on the open task, and its reply shows in the task's log without a reload."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.served import Served
from tests.web.browser import chromium, page, sign_in, site

__all__ = ["chromium", "page", "site"]  # fixtures

ECHO = 'otherwise:\n  - reply: "heard {text} from {sender}"\n'


def test_more_text_for_a_task_is_typed_into_its_page_and_answered_there(
    page: Page, site: Served, tmp_path: Path
) -> None:
    (tmp_path / "clerk.yaml").write_text(ECHO)
    brain = f"scripted:{tmp_path / 'clerk.yaml'}"
    headers = {"Authorization": f"Bearer {site.owner_token}"}
    with httpx.Client(base_url=site.url + "/api/v1", headers=headers, timeout=15) as owner:
        hired = owner.post("/agents", json={"name": "clerk", "node": "local", "brain": brain})
        assert hired.status_code == 201, hired.text
    sign_in(page, site)
    page.get_by_role("link", name="Tasks", exact=True).click()
    expect(page).to_have_url(site.url + "/tasks")  # typed into the page that came, not the last
    page.get_by_label("Agent", exact=True).fill("clerk")
    page.get_by_label("What to do").fill("count the spoons")
    page.get_by_role("button", name="Give the task").click()
    expect(page).to_have_url(re.compile(r"/tasks/\d+$"))
    log = page.locator("#task .messages")
    expect(log).to_contain_text("heard count the spoons from owner")
    page.get_by_label("More for clerk on this task").fill("and the forks")
    page.get_by_role("button", name="Send").click()
    expect(log).to_contain_text("heard and the forks from owner")
