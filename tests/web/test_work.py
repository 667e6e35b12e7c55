"""The work pages: tasks (given, read, stopped, cancelled), a root's tree of agent
conversations, the runs across the installation with Stop, and the turns waiting for a person;
each as far as the reader may read, with bad input a clear 4xx that changes nothing."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx

from parley.reads.model import DEFAULT_LIMIT
from tests.runs.support import get, say, script
from tests.served import Served
from tests.support import Harness, eventually, items
from tests.web.support import Browser, signed_in

DONE = "otherwise: [{complete: 'counted {text}'}]"
SLOW = "otherwise: [{sleep: 60}]"
RELAY = {  # a asks b, b asks c, and c's answer comes back down the chain
    "a": "rules: [{when: {from: b}, do: [{report: '{text}'}]}]\n"
    "otherwise: [{send: {to: b, text: 'q: {text}'}}]\n",
    "b": "rules:\n"
    "  - {when: {from: a}, do: [{send: {to: c, text: '{text}'}}]}\n"
    "  - {when: {from: c}, do: [{send: {to: a, text: '{text}'}}]}\n",
    "c": "rules: [{when: {from: b}, do: [{reply: 'answer to {text}'}]}]\n",
}


async def give(browser: Browser, agent: str, text: str) -> int:
    answer = await browser.post("/tasks", {"agent": agent, "text": text})
    assert answer.status_code == 303, answer.text
    found = re.fullmatch(r"/tasks/(\d+)", answer.headers["location"])
    assert found, answer.headers["location"]
    return int(found.group(1))


async def task_status(parley: Harness, task_id: int) -> str:
    status = (await get(parley.owner, f"/tasks/{task_id}"))["topic"]["status"]
    assert isinstance(status, str)
    return status


async def run_state(parley: Harness, run_id: int) -> str:
    state = (await get(parley.owner, f"/runs/{run_id}"))["run"]["state"]
    assert isinstance(state, str)
    return state


async def test_a_task_given_on_the_page_is_worked_and_shown(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", DONE))
    async with signed_in(parley) as browser:
        assert 'action="/tasks"' in (await browser.get("/tasks")).text
        task_id = await give(browser, "clerk", "the <spoons>")
        assert await eventually(lambda: _shows(browser, f"/tasks/{task_id}", "state-done"))
        page = await browser.get(f"/tasks/{task_id}")
        done = await browser.get("/tasks?status=done")
        still_open = await browser.get("/tasks?status=open")
    assert "counted the &lt;spoons&gt;" in page.text and "<spoons>" not in page.text
    assert f'data-live="/tasks/{task_id}/live"' in page.text
    assert f'href="/roots/{task_id}"' in page.text
    assert 'class="state state-finished"' in page.text  # its run
    assert "Cancel the task" not in page.text  # it ended: nothing to cancel
    assert f'href="/tasks/{task_id}"' in done.text
    assert f'href="/tasks/{task_id}"' not in still_open.text


async def test_the_tasks_list_goes_on_from_a_cursor(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", SLOW), max_sessions=1)
    async with signed_in(parley) as browser:
        given = [await give(browser, "napper", f"nap {n}") for n in range(3)]
        cursor = (await get(parley.owner, "/tasks?limit=2"))["next"]
        older = await browser.get(f"/tasks?before={cursor}")
        newest = await browser.get("/tasks")
    assert all(f'href="/tasks/{task_id}"' in newest.text for task_id in given)
    assert newest.text.index("nap 2") < newest.text.index("nap 0")  # newest first
    assert f'href="/tasks/{given[0]}"' in older.text
    assert f'href="/tasks/{given[2]}"' not in older.text


async def test_a_task_page_links_its_subtasks(parley: Harness, tmp_path: Path) -> None:
    boss = (
        "rules: [{when: {text: '^subtask'}, do: [{complete: 'all done'}]}]\n"
        "otherwise: [{spawn: {agent: helper, text: 'part of {text}'}}]\n"
    )
    await parley.hire("helper", brain=script(tmp_path, "helper", DONE))
    await parley.hire("boss", brain=script(tmp_path, "boss", boss))
    async with signed_in(parley) as browser:
        task_id = await give(browser, "boss", "the job")
        assert await eventually(lambda: _has_subtask(parley, task_id))
        (sub,) = items(await get(parley.owner, f"/tasks?parent={task_id}"))
        page = await browser.get(f"/tasks/{task_id}")
        subtask = await browser.get(f"/tasks/{sub['id']}")
        assert await eventually(lambda: _shows(browser, f"/tasks/{task_id}", "all done"))
    assert f'href="/tasks/{sub["id"]}"' in page.text
    assert "part of the job" in subtask.text and "Spawned by" in subtask.text


async def _has_subtask(parley: Harness, task_id: int) -> bool:
    return bool(items(await get(parley.owner, f"/tasks?parent={task_id}")))


async def test_a_member_reads_a_task_but_not_an_owner_s_conversation_tree(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", SLOW))
    queued = await say(parley.owner, "napper", "owner's own")
    ada = await parley.add_person("ada")
    async with signed_in(parley) as owner:
        task_id = await give(owner, "napper", "shared work")
    async with signed_in(parley, ada) as browser:
        task = await browser.get(f"/tasks/{task_id}")
        listed = await browser.get("/tasks")
        tree = await browser.get(f"/roots/{queued['topic_id']}")
        nothing = await browser.get("/roots/987654")
        refused = await browser.post(f"/tasks/{task_id}/cancel")
        deleted = await browser.get("/tasks?deleted=true")
    assert task.status_code == 200 and "shared work" in task.text
    assert f'href="/tasks/{task_id}"' in listed.text
    assert 'name="deleted"' not in listed.text  # an owner's filter
    assert "Cancel the task" not in task.text and "Stop" in task.text
    assert (tree.status_code, nothing.status_code) == (404, 404)
    assert "owner's own" not in tree.text and "Not found" in tree.text
    assert refused.status_code == 403 and "only an owner" in refused.text
    assert deleted.status_code == 200
    assert await task_status(parley, task_id) == "open"  # the refusal changed nothing


async def test_bad_input_is_a_clear_page_and_changes_nothing(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", DONE))
    async with signed_in(parley) as browser:
        empty = await browser.post("/tasks", {"agent": "clerk", "text": "   "})
        no_agent = await browser.post("/tasks", {"agent": "", "text": "x"})
        unknown = await browser.post("/tasks", {"agent": "nobody", "text": "x"})
        not_a_number = await browser.get("/tasks/abc")
        absent = await browser.get("/tasks/424242")
        bad_status = await browser.get("/tasks?status=sideways")
        bad_cursor = await browser.get("/tasks?before=nonsense")
        bad_run = await browser.post("/runs/abc/stop")
        bad_state = await browser.get("/runs?state=sideways")
    assert empty.status_code == 400 and "the task is empty" in empty.text
    assert no_agent.status_code == 400 and "Agent is required" in no_agent.text
    assert unknown.status_code == 404
    assert not_a_number.status_code == 400 and "Not understood" in not_a_number.text
    assert absent.status_code == 404 and "no task 424242" in absent.text
    assert bad_status.status_code == 400 and "status must be one of" in bad_status.text
    assert bad_cursor.status_code == 400 and "not a cursor" in bad_cursor.text
    assert (bad_run.status_code, bad_state.status_code) == (400, 400)
    assert items(await get(parley.owner, "/tasks")) == []


async def test_stop_and_cancel_a_task_from_its_page(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", SLOW))
    async with signed_in(parley) as browser:
        task_id = await give(browser, "napper", "sleep on it")
        assert await eventually(lambda: _shows(browser, f"/tasks/{task_id}", "state-running"))
        page = await browser.get(f"/tasks/{task_id}")
        stopped = await browser.post(f"/tasks/{task_id}/stop")
        after_stop = await browser.get(stopped.headers["location"])
        cancelled = await browser.post(f"/tasks/{task_id}/cancel")
        after_cancel = await browser.get(cancelled.headers["location"])
        again = await browser.post(f"/tasks/{task_id}/cancel")
    assert f'action="/tasks/{task_id}/cancel"' in page.text
    assert "Stopped 1 turn(s)." in after_stop.text and "stopped by owner" in after_stop.text
    assert await task_status(parley, task_id) == "cancelled"
    assert "state-cancelled" in after_cancel.text and "Cancel the task" not in after_cancel.text
    assert again.status_code == 409  # it ended already


async def test_the_runs_page_lists_a_queued_run_and_stop_stops_it(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("solo", brain=script(tmp_path, "solo", SLOW), max_sessions=1)
    first = await say(parley.owner, "solo", "first")
    assert await eventually(lambda: _is(parley, first["run_id"], "running"))
    queued = await say(parley.owner, "solo", "second")
    ada = await parley.add_person("ada")
    async with signed_in(parley, ada) as member:
        theirs = await member.get("/runs")
        refused = await member.post(f"/runs/{first['run_id']}/stop")
    async with signed_in(parley) as browser:
        listed = await browser.get("/runs")
        of_other = await browser.get("/runs?agent=solo&state=finished")
        stopped = await browser.post(f"/runs/{queued['run_id']}/stop")
        after = await browser.get(stopped.headers["location"])
        await browser.post(f"/runs/{first['run_id']}/stop")
    assert f"Stop run {queued['run_id']}" in listed.text
    assert f"Stop run {first['run_id']}" in listed.text and "state-queued" in listed.text
    assert 'data-live="/runs/live?state=queued&amp;state=running"' in listed.text
    assert "Stop run" not in of_other.text
    assert f"Stop run {first['run_id']}" not in theirs.text  # not a run of hers to read
    assert refused.status_code == 404
    assert f"Stopped run {queued['run_id']}." in after.text
    stopped_run = (await get(parley.owner, f"/runs/{queued['run_id']}"))["run"]
    assert (stopped_run["state"], stopped_run["reason"]) == ("stopped", "stopped by owner")


async def test_the_tree_nests_b_to_c_under_a_to_b(parley: Harness, tmp_path: Path) -> None:
    for name, rules in RELAY.items():
        await parley.hire(name, brain=script(tmp_path, name, rules), max_sessions=4)
    said = await say(parley.owner, "a", "the time")
    threads = await _threads(parley, 2)
    async with signed_in(parley) as browser:
        tree = await browser.get(f"/roots/{said['topic_id']}")
    assert tree.status_code == 200
    assert _drawn(tree.text) == [(1, "a", "b"), (2, "b", "c")]
    assert all(f"<code>{t['thread_id']}</code>" in tree.text for t in threads)
    assert "answer to q: the time" in tree.text  # c's reply, in b→c's messages
    assert f'data-live="/roots/{said["topic_id"]}/live"' in tree.text


async def test_a_human_agent_s_turn_is_answered_on_the_page(parley: Harness) -> None:
    ada = await parley.add_person("ada")
    await parley.hire("ada-desk", human="ada")
    async with signed_in(parley) as owner:
        task_id = await give(owner, "ada-desk", "sign this")
        assert "No turn waits for you." in (await owner.get("/turns")).text
    async with signed_in(parley, ada) as browser:
        assert await eventually(lambda: _shows(browser, "/turns", "sign this"))
        page = await browser.get("/turns")
        run_id = int(re.findall(r'action="/runs/(\d+)/answer"', page.text)[0])
        async with signed_in(parley) as owner:
            not_hers = await owner.post(f"/runs/{run_id}/answer", {"text": "me instead"})
        empty = await browser.post(f"/runs/{run_id}/answer", {"text": " "})
        answered = await browser.post(
            f"/runs/{run_id}/answer", {"text": "signed", "complete": "on"}
        )
        after = await browser.get(answered.headers["location"])
    assert "Complete the task" in page.text
    assert not_hers.status_code == 404 and empty.status_code == 400
    assert "Answered run" in after.text and "No turn waits for you." in after.text
    shown = await get(parley.owner, f"/tasks/{task_id}")
    assert (shown["topic"]["status"], shown["topic"]["result"]) == ("done", "signed")


def test_live_parts_stream_what_the_page_shows_and_refuse_the_rest(served: Served) -> None:
    owner = httpx.Client(
        base_url=served.url, headers={"Authorization": f"Bearer {served.owner_token}"}
    )
    owner.post("/api/v1/agents", json={"name": "worker", "node": "local"})
    task = owner.post("/api/v1/tasks", json={"agent": "worker", "text": "live work"}).json()
    said = owner.post("/api/v1/conversations/worker/messages", json={"text": "mine"}).json()
    mia = owner.post("/api/v1/people", json={"name": "mia", "role": "member"}).json()["token"]
    with httpx.Client(base_url=served.url) as browser:
        browser.post("/signin", data={"token": mia}, headers={"Origin": served.url})
        refused = browser.get(f"/roots/{said['topic_id']}/live")
        parts = [_first_part(browser, path) for path in (f"/tasks/{task['id']}/live", "/runs/live")]
    owner.close()
    assert refused.status_code == 404
    assert all(part[0] == "event: part" for part in parts)
    assert "live work" in parts[0][1] and "state-open" in parts[0][1]
    assert "queued" in parts[1][1]  # the runs part, as the page draws it


def _first_part(browser: httpx.Client, path: str) -> tuple[str, str]:
    with browser.stream("GET", path) as live:
        assert live.headers["content-type"].startswith("text/event-stream")
        lines = live.iter_lines()
        name = next(lines)
        data = []
        for line in lines:
            if not line:
                break
            data.append(line.removeprefix("data: "))
    return name, "\n".join(data)


async def _shows(browser: Browser, path: str, text: str) -> bool:
    return text in (await browser.get(path)).text


async def _is(parley: Harness, run_id: int, state: str) -> bool:
    return await run_state(parley, run_id) == state


async def _threads(parley: Harness, count: int) -> list[Any]:
    async def there() -> bool:
        found = items(await get(parley.owner, "/agent-conversations?include_closed=true"))
        reports = await get(parley.owner, "/conversations/a")
        bodies = [m["body"] for m in reports["messages"]["items"] if m["kind"] == "report"]
        return len(found) == count and bodies != []

    assert await eventually(there)
    return items(await get(parley.owner, "/agent-conversations?include_closed=true"))


class _Tree(HTMLParser):
    """Each drawn conversation as (depth, sender, recipient), depth counted in nested lists."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.reading: str | None = None
        self.drawn: list[tuple[int, str, str]] = []
        self.sender = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if tag == "ul" and (self.depth or cls == "tree"):
            self.depth += 1
        if tag == "strong" and cls in {"sender", "recipient"}:
            self.reading = cls

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.reading == "sender":
            self.sender = data
        elif self.reading == "recipient":
            self.drawn.append((self.depth, self.sender, data))
        self.reading = None


def _drawn(html: str) -> list[tuple[int, str, str]]:
    parser = _Tree()
    parser.feed(html)
    return parser.drawn


def test_the_runs_live_part_draws_its_older_link_as_the_page_does(served: Served) -> None:
    owner = httpx.Client(
        base_url=served.url, headers={"Authorization": f"Bearer {served.owner_token}"}
    )
    owner.post("/api/v1/agents", json={"name": "worker", "node": "local", "max_sessions": 1})
    for n in range(DEFAULT_LIMIT + 1):  # more than a page of runs
        owner.post("/api/v1/tasks", json={"agent": "worker", "text": f"job {n}"})
    owner.close()
    with httpx.Client(base_url=served.url) as browser:
        browser.post("/signin", data={"token": served.owner_token}, headers={"Origin": served.url})
        page = browser.get("/runs?state=queued&state=running&state=finished")
        name, part = _first_part(browser, "/runs/live?state=queued&state=running&state=finished")
    assert name == "event: part" and 'class="more"' in part
    older = page.text.split('<p class="more"><a href="')[1].split('"')[0]
    assert older in part  # the same link, with the same filters
