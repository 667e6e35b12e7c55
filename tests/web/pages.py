"""Every page of the site with data in its lists, for the browser tests that visit them all (on a
phone, under axe): agents with long names, a task and its subtask, runs, a chat with long
words, channel accounts, a warning and a note, an agent exposed over A2A and a client, a turn
waiting for the owner; and the pages an owner sees that a member does not."""

from __future__ import annotations

from pathlib import Path

from tests.served import Served
from tests.web.test_in_browser import api

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


def with_data(site: Served, tmp_path: Path) -> dict[str, int]:
    """The data; the ids the pages' paths name (``task``, ``run``: the task's last run)."""
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
        boss = "/agents/boss-with-a-long-name"
        owner.post(f"{boss}/warnings", json={"reason": f"a warning {LONG}"}).raise_for_status()
        owner.post(f"{boss}/memory", json={"note": f"a note {LONG}"}).raise_for_status()
        owner.post("/a2a/agents", json={"agent": "boss-with-a-long-name"}).raise_for_status()
        owner.post("/a2a/clients", json={"name": "planner"}).raise_for_status()
        me = owner.get("/people").json()["items"][0]["name"]
        hired = owner.post("/agents", json={"name": "a-person", "node": "local", "human": me})
        assert hired.status_code == 201, hired.text
        owner.post("/tasks", json={"agent": "a-person", "text": "your turn"}).raise_for_status()
        runs = owner.get("/runs", params={"topic": task["id"]}).json()["items"]
    return {"task": task["id"], "run": runs[-1]["id"]}


def member_token(site: Served) -> str:
    """A member's token (mia), made by the owner."""
    with api(site) as owner:
        token: str = owner.post("/people", json={"name": "mia"}).json()["token"]
    return token


def paths(ids: dict[str, int], person: str) -> list[str]:
    """The pages ``person`` (owner or member) may see, their ids filled in."""
    shown = [p for p in PAGES if person == "owner" or p not in OWNERS_ONLY]
    return [p.format(**ids) for p in shown]
