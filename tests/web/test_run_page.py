"""The run inspector: a page per run, linked wherever a run appears, showing where it sits, when,
its input and output, its tool calls in order, the run that set it off and those it set off, and
Stop while it is open; readable by exactly who reads the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from parley.settings import Settings
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.runs.support import follow, get, say, script
from tests.runs.test_cut_short import first_chunk
from tests.support import Harness, ManualClock, eventually, items, started
from tests.web.support import signed_in
from tests.web.test_work import give

SLOW = "otherwise:\n  - reply: thinking\n  - sleep: 30\n"
# The helper completes its part; the boss, told so, ends its task. Told so, it used to spawn again,
# and again at each result (50 subtasks within a second): a test that read the first one late
# found others beside it.
BOSS = (
    "rules: [{when: {text: '^part of'}, do: [{complete: 'all done'}]},"
    " {when: {text: '^subtask '}, do: [{complete: 'the job is done'}]}]\n"
    "otherwise: [{spawn: {agent: helper, text: 'part of {text}'}}]\n"
)


@pytest.fixture
async def model(settings: Settings, clock: ManualClock) -> AsyncIterator[tuple[Harness, Script]]:
    script_ = Script(replies=[])
    with serving(openai_app(script_)) as url:
        configured = settings.model_copy(
            update={"openai_base_url": f"{url}/v1", "openai_api_key": SecretStr("k")}
        )
        async with started(configured, clock) as parley:
            yield parley, script_


async def test_a_run_shows_its_input_output_and_tool_calls_in_order(
    model: tuple[Harness, Script],
) -> None:
    parley, replies = model
    long_text = "y" * 600
    replies.replies = [
        Reply(
            text="Let me look. ", calls=(ToolCall("write", {"path": "a.md", "content": long_text}),)
        ),
        Reply(calls=(ToolCall("read", {"path": "missing.md"}),)),
        Reply(text="All <done>."),
    ]
    await parley.hire("builder", brain="openai:m", tools=["read", "write"], ask=[])
    queued = await say(parley.owner, "builder", "build the <thing>")
    await follow(parley.owner, queued["run_id"])
    run_id, topic_id = queued["run_id"], queued["topic_id"]
    async with signed_in(parley) as browser:
        page = (await browser.get(f"/runs/{run_id}")).text
        listed = (await browser.get("/runs?state=finished")).text
    assert f'href="/runs/{run_id}"' in listed  # the runs list links it
    assert "state-finished" in page and 'href="/agents/builder"' in page
    assert f'href="/roots/{topic_id}"' in page
    assert "build the &lt;thing&gt;" in page and "<thing>" not in page  # its input, escaped
    assert "All &lt;done&gt;." in page  # its output
    write_at, read_at = page.index("<strong>write</strong>"), page.index("<strong>read</strong>")
    assert write_at < read_at  # in the order they were made
    assert 'id="call-1-arguments"' in page  # the long arguments folded away
    assert "a.md" in page and "missing.md" in page
    assert "a text in its topic" in page  # nothing set it off but the person's text
    assert "Stop run" not in page  # it ended


async def test_an_open_run_streams_and_can_be_stopped_there(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", SLOW))
    queued = await say(parley.owner, "napper", "take a nap")
    run_id = queued["run_id"]
    assert await first_chunk(parley, run_id) == "thinking"
    async with signed_in(parley) as browser:
        page = (await browser.get(f"/runs/{run_id}")).text
        assert f'data-stream="/runs/{run_id}/stream"' in page
        assert f'data-live="/runs/{run_id}/live"' in page
        assert f'action="/runs/{run_id}/stop"' in page
        stopped = await browser.post(f"/runs/{run_id}/stop", {"from": "run"})
        assert stopped.status_code == 303
        assert stopped.headers["location"] == f"/runs/{run_id}"  # back to the run's own page

        async def kept() -> bool:
            shown = (await browser.get(f"/runs/{run_id}")).text
            return "state-stopped" in shown and "thinking" in shown

        assert await eventually(kept)  # what it had said is kept, and shown as cut short
        after = (await browser.get(f"/runs/{run_id}")).text
    assert "what it had said so far is kept" in after
    assert "data-stream" not in after


async def test_a_run_links_the_run_that_set_it_off_and_those_it_set_off(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("helper", brain=script(tmp_path, "helper", BOSS))
    await parley.hire("boss", brain=script(tmp_path, "boss", BOSS))
    async with signed_in(parley) as browser:
        task_id = await give(browser, "boss", "the job")

        async def subtask_ran() -> bool:
            subtasks = items(await get(parley.owner, f"/tasks?parent={task_id}"))
            return bool(subtasks) and bool(
                items(await get(parley.owner, f"/runs?topic={subtasks[0]['id']}"))
            )

        assert await eventually(subtask_ran)
        (sub,) = items(await get(parley.owner, f"/tasks?parent={task_id}"))
        (boss_run, *_) = reversed(items(await get(parley.owner, f"/runs?topic={task_id}")))
        (helper_run,) = items(await get(parley.owner, f"/runs?topic={sub['id']}"))
        spawner = (await browser.get(f"/runs/{boss_run['id']}")).text
        spawned = (await browser.get(f"/runs/{helper_run['id']}")).text
        task_page = (await browser.get(f"/tasks/{sub['id']}")).text
    assert f'href="/runs/{helper_run["id"]}"' in spawner.split('id="run-set-off"')[1]
    set_off_by = spawned.split("Set off by")[1].split("</dd>")[0]
    assert f'href="/runs/{boss_run["id"]}"' in set_off_by
    assert f'href="/runs/{boss_run["id"]}"' in task_page  # "spawned by" links it too


async def test_a_run_is_read_by_exactly_who_reads_its_topic(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", SLOW))
    owners = await say(parley.owner, "napper", "owner's own")
    ada = await parley.add_person("ada")
    async with signed_in(parley) as owner:
        task_id = await give(owner, "napper", "shared work")
    (shared,) = items(await get(parley.owner, f"/runs?topic={task_id}"))
    async with signed_in(parley, ada) as browser:
        hidden = await browser.get(f"/runs/{owners['run_id']}")
        live = await browser.get(f"/runs/{owners['run_id']}/live")
        missing = await browser.get("/runs/987654")
        seen = await browser.get(f"/runs/{shared['id']}")
    assert (hidden.status_code, live.status_code, missing.status_code) == (404, 404, 404)
    assert "owner's own" not in hidden.text and "Not found" in hidden.text
    assert seen.status_code == 200 and "shared work" in seen.text
