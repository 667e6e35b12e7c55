"""Absent, never forbidden: every route with an id in its path, API and page alike, answers a
member asking for something of another person's (or deleted) exactly as it answers for an id
that names nothing. The routes are read off the app, so a new one is walked without a word
here; a new kind of path parameter fails the walk until it is named below."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

from tests.runs.support import say, script
from tests.support import Harness, eventually, items
from tests.web.support import Browser, signed_in

# Parameters naming things every member reads (agents, nodes, people, connections, channel
# accounts by name) or the caller's own (``agent``: their conversation with it): nothing of
# another person's hides behind them. The value is what a route that also takes a hidden id
# is given.
READABLE = {
    "name": "a",
    "agent": "a",
    "role": "a",
    "peer": "b",
    "channel": "web",
    "account_id": "home",
    "user_id": "u-1",
    "variable": "A",
    "server": "s",
    "note_id": "1",  # an agent's memory is every member's to read
}
MISSING_ID = "987654"
MISSING = {
    "task_id": MISSING_ID,
    "run_id": MISSING_ID,
    "topic_id": MISSING_ID,
    "ref": MISSING_ID,
    "binding_id": MISSING_ID,
    "conversation_id": MISSING_ID,
    "thread_id": "no-such-thread",
    "approval_id": MISSING_ID,
}
SENDER = """
rules:
  - when: {from: b}
    do: [{reply: "b said {text}"}]
otherwise:
  - send: {to: b, text: "q: {text}"}
"""
ANSWERER = """
otherwise:
  - reply: "answer to {text}"
"""


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    page: bool  # a page's route: a cookie and a form, not a bearer token and JSON

    def params(self) -> list[str]:
        return re.findall(r"\{(\w+)\}", self.path)

    def url(self, values: dict[str, str]) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: values[m.group(1)], self.path)


def routes(app: Any) -> Iterator[Route]:
    for route in app.router.routes:
        contexts = getattr(route, "effective_route_contexts", None)
        for found in contexts() if contexts else [route]:
            path = getattr(found, "path", "")
            for method in sorted(getattr(found, "methods", None) or ()):
                if "{" in path and method != "HEAD":
                    yield Route(method, path, not path.startswith("/api/"))


async def _hidden_things(parley: Harness, tmp_path: Path) -> dict[str, str]:
    """One of each kind, the owner's alone (or deleted): the ids a member may not read."""
    await parley.hire("a", brain=script(tmp_path, "a", SENDER))
    await parley.hire("b", brain=script(tmp_path, "b", ANSWERER))
    queued = await say(parley.owner, "a", "hello")
    assert await eventually(lambda: _threads(parley, 1))
    (thread,) = items((await parley.owner.get("/api/v1/agent-conversations")).json())
    task = (await parley.owner.post("/api/v1/tasks", json={"agent": "b", "text": "x"})).json()
    assert (await parley.owner.delete(f"/api/v1/tasks/{task['id']}")).status_code == 204
    account = await parley.owner.put("/api/v1/channels/web/accounts/home", json={})
    assert account.status_code == 200, account.text
    made = await parley.owner.post("/api/v1/channels/web/home/conversations", json={"title": "x"})
    web_id = str(made.json()["id"])
    binding = await parley.owner.post(
        "/api/v1/bindings",
        json={
            "session": f"topic:{queued['topic_id']}",
            "channel": "web",
            "account_id": "home",
            "conversation_id": web_id,
        },
    )
    assert binding.status_code == 201, binding.text
    async with parley.context.store.transaction() as tx:  # a call of the owner's turn waiting
        now = parley.clock.now()
        approval_id = await tx.approvals.add(
            queued["run_id"], "run", '{"command": "ls"}', now, now + timedelta(hours=1)
        )
    return {
        "approval_id": str(approval_id),
        "task_id": str(task["id"]),
        "run_id": str(queued["run_id"]),
        "topic_id": str(queued["topic_id"]),
        "ref": str(queued["topic_id"]),
        "binding_id": str(binding.json()["id"]),
        "conversation_id": web_id,
        "thread_id": str(thread["thread_id"]),
    }


async def _threads(parley: Harness, count: int) -> bool:
    found = await parley.owner.get("/api/v1/agent-conversations")
    return len(items(found.json())) >= count


def _body(spec: dict[str, Any], route: Route) -> dict[str, Any] | None:
    """The route's documented example body (every body schema has one), or None."""
    if route.page:
        return None  # a page's routes take forms (see _ask)
    operation = spec["paths"][route.path][route.method.lower()]
    content = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if content is None:
        return None
    name = content["schema"]["$ref"].rsplit("/", 1)[1]
    example = spec["components"]["schemas"][name]["examples"][0]
    assert isinstance(example, dict)
    return example


async def _ask(
    route: Route, url: str, member: httpx.AsyncClient, browser: Browser, body: Any
) -> httpx.Response:
    if not route.page:
        return await member.request(route.method, url, json=body)
    if route.method == "GET":
        return await browser.http.get(url)
    return await browser.post(url, {"text": "hello", "reason": "because", "mode": "drain"})


def _shape(answer: httpx.Response, value: str) -> tuple[int, str, str]:
    """Status, error code (or page title) and message, with the id asked for written ID."""
    named = re.compile(rf"(?<![\w-]){re.escape(value)}(?![\w-])")
    if answer.headers.get("content-type", "").startswith("application/json"):
        body = answer.json()
        return (
            answer.status_code,
            str(sorted(body)) + body["error"],
            named.sub("ID", body["message"]),
        )
    title = re.search(r"<h1>(.*?)</h1>", answer.text, re.S)
    alert = re.search(r'role="alert">(.*?)</p>', answer.text, re.S)
    return (
        answer.status_code,
        title.group(1) if title else answer.headers.get("location", ""),
        named.sub("ID", alert.group(1)) if alert else "",
    )


async def test_what_a_member_may_not_read_answers_as_what_does_not_exist(
    parley: Harness, tmp_path: Path
) -> None:
    hidden = await _hidden_things(parley, tmp_path)
    mia = await parley.add_person("mia")
    app = parley.transport.app
    spec = app.openapi()  # type: ignore[attr-defined]
    walked = set()
    async with parley.client(mia) as member, signed_in(parley, mia) as browser:
        for route in routes(app):
            unknown = set(route.params()) - set(READABLE) - set(MISSING)
            assert not unknown, f"{route.path}: name {unknown} in READABLE or MISSING"
            for param in set(route.params()) & set(MISSING):
                body = _body(spec, route)
                answers = []
                for value in (hidden[param], MISSING[param]):
                    url = route.url(READABLE | MISSING | {param: value})
                    answer = await _ask(route, url, member, browser, body)
                    answers.append(_shape(answer, value))
                seen, absent = answers
                where = f"{route.method} {route.path} ({param})"
                assert seen == absent, f"{where}: {seen} for another's, {absent} for none"
                only_owners = seen[0] == 403 and "only an owner may" in seen[2]
                # A running turn's route refuses a person's token before any id is read.
                only_turns = seen[0] == 401 and route.path.startswith("/api/v1/act/")
                assert seen[0] == 404 or only_owners or only_turns, f"{where}: {seen}"
                walked.add((route.method, route.path))
    assert len(walked) >= 25  # the API's and the page's routes with ids were all reached
