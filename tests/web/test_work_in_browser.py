"""Work and links in a real browser: a task given on the page finishes while the page watches,
its tree shows who asked whom; a run's page leads to the run it set off and back; a connection
between two installations is paused and unpaused."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from parley.settings import Settings
from tests.served import Served, serving
from tests.web.browser import chromium, page, shot, sign_in, site

__all__ = ["chromium", "page", "site"]  # fixtures

TEAM = {
    "lead": """\
rules:
  - when: {from: helper}
    do:
      - report: "helper says: {text}"
otherwise:
  - send: {to: helper, text: "please look into {text}"}
  - complete: "asked helper about {text}"
""",
    "helper": """\
rules:
  - when: {from: clerk}
    do:
      - send: {to: lead, text: "clerk found: {text}"}
otherwise:
  - send: {to: clerk, text: "find {text}"}
""",
    "clerk": 'otherwise:\n  - reply: "the answer to {text}"\n',
}


def api(site: Served) -> httpx.Client:
    headers = {"Authorization": f"Bearer {site.owner_token}"}
    return httpx.Client(base_url=site.url + "/api/v1", headers=headers, timeout=15)


def test_a_task_finishes_on_the_page_and_its_tree_shows_who_asked_whom(
    page: Page, site: Served, tmp_path: Path
) -> None:
    with api(site) as owner:
        for name, rules in TEAM.items():
            (tmp_path / f"{name}.yaml").write_text(rules)
            brain = f"scripted:{tmp_path / name}.yaml"
            hired = owner.post("/agents", json={"name": name, "node": "local", "brain": brain})
            assert hired.status_code == 201, hired.text
    sign_in(page, site)
    page.get_by_role("link", name="Tasks", exact=True).click()
    expect(page).to_have_url(site.url + "/tasks")
    page.get_by_label("Agent", exact=True).fill("lead")
    page.get_by_label("What to do").fill("the budget")
    page.get_by_role("button", name="Give the task").click()
    expect(page).to_have_url(re.compile(r"/tasks/\d+$"))
    # The page is not reloaded: its live part shows the task done, then the late answer that
    # the relay brings back, reported on it.
    expect(page.locator("dd .state")).to_have_text("done")
    expect(page.locator("main")).to_contain_text(
        "helper says: clerk found: the answer to find please look into the budget"
    )

    page.get_by_role("link", name=re.compile("tree|agent conversations", re.I)).first.click()
    tree = page.locator("ul.tree")
    expect(tree.locator("li.conversation")).to_have_count(2)
    top = tree.locator(":scope > li")
    expect(top).to_have_count(1)
    expect(top.locator(".sender").first).to_have_text("lead")
    expect(top.locator(".recipient").first).to_have_text("helper")
    nested = top.locator("ul li.conversation")
    expect(nested.locator(".sender")).to_have_text("helper")
    expect(nested.locator(".recipient")).to_have_text("clerk")
    for summary in page.locator("main details > summary").all():
        summary.click()
    expect(nested.locator(".messages")).to_contain_text("the answer to find please look into")
    shot(page, "web-tree.png", tmp_path)


SPAWNER = {
    "planner": "otherwise:\n"
    "  - spawn: {agent: checker, text: 'check the figures for {text}'}\n"
    "  - reply: 'Asked checker to check the figures.'\n",
    "checker": "otherwise:\n  - complete: 'The figures add up: 4 rows, 1,240 in all.'\n",
}


def test_a_runs_page_leads_to_the_run_it_set_off_and_back(
    page: Page, site: Served, tmp_path: Path
) -> None:
    with api(site) as owner:
        for name, rules in SPAWNER.items():
            (tmp_path / f"{name}.yaml").write_text(rules)
            brain = f"scripted:{tmp_path / name}.yaml"
            hired = owner.post("/agents", json={"name": name, "node": "local", "brain": brain})
            assert hired.status_code == 201, hired.text
        task = owner.post("/tasks", json={"agent": "planner", "text": "the May invoices"}).json()
        run = owner.get("/runs", params={"topic": task["id"]}).json()["items"][-1]["id"]
    sign_in(page, site)
    page.goto(site.url + f"/runs/{run}")
    facts = page.locator("dl.facts")
    expect(facts.locator(".state")).to_have_text("finished")
    expect(page.locator("main")).to_contain_text("Asked checker to check the figures.")
    set_off = page.locator("section", has=page.get_by_role("heading", name="Runs it set off"))
    expect(set_off.locator(".state")).to_have_text("finished")
    shot(page, "web-run.png", tmp_path)
    set_off.get_by_role("link", name=re.compile(r"^run \d+$")).click()
    expect(page.locator("h1")).not_to_have_text(f"Run {run}")
    expect(page.locator("main")).to_contain_text("check the figures for the May invoices")
    page.locator("dl.facts").get_by_role("link", name=f"run {run}").click()
    expect(page.locator("h1")).to_have_text(f"Run {run}")


def test_a_connection_is_paused_and_unpaused_from_the_page(
    page: Page, site: Served, tmp_path: Path
) -> None:
    other = Settings(
        data_dir=tmp_path / "other",
        database_url=f"sqlite:///{tmp_path / 'other.db'}",
        heartbeat_seconds=3600,
        sweep_seconds=3600,
    )
    with serving(other) as peer, api(site) as here, api(peer) as there:
        invite = there.post("/connections/invites", json={"name": "home"})
        assert invite.status_code == 201, invite.text
        accepted = here.post("/connections", json={"code": invite.json()["code"], "name": "peer"})
        assert accepted.status_code == 201, accepted.text
        sign_in(page, site)
        page.get_by_role("link", name="Connections").click()
        expect(page).to_have_url(site.url + "/connections")
        row = page.locator("tr", has_text="peer")
        expect(row).to_contain_text("active")
        row.get_by_role("button", name="Pause").click()
        expect(page.locator("tr", has_text="peer")).to_contain_text("paused")
        assert here.get("/connections").json()["items"][0]["state"] == "paused"
        page.locator("tr", has_text="peer").get_by_role("button", name="Unpause").click()
        expect(page.locator("tr", has_text="peer")).to_contain_text("active")
        assert here.get("/connections").json()["items"][0]["state"] == "active"


def test_an_agent_is_hired_and_retired_from_the_page(page: Page, site: Served) -> None:
    sign_in(page, site)
    page.get_by_role("link", name="Agents").click()
    expect(page).to_have_url(site.url + "/agents")
    page.get_by_label("Name").fill("archivist")
    page.get_by_label("Engram (its system prompt)").fill("You keep the archive.")
    page.get_by_role("button", name="Hire").click()
    expect(page).to_have_url(site.url + "/agents/archivist")
    expect(page.locator("main")).to_contain_text("You keep the archive.")
    with api(site) as owner:
        assert owner.get("/agents/archivist").json()["lifecycle"] == "active"
    page.get_by_label("Reason for retiring (optional)").fill("the archive moved")
    page.get_by_role("button", name="Retire (drain)").click()
    expect(page.locator("main")).to_contain_text("retired")
    with api(site) as owner:
        retired = owner.get("/agents/archivist").json()
    assert retired["lifecycle"] == "retired"
    assert "the archive moved" in (retired["retired_reason"] or "")
