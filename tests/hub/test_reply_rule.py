"""One rule for every kind of brain (hub/outcomes.py): a turn's reply goes to whoever the turn
answers; in an agent conversation that is the other agent, and an empty reply sends nothing.

Each kind is asked by the same scripted agent, which reports whatever comes back into the
person's conversation."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

from parley.settings import Settings
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, serving
from tests.runs.support import get, get_all, say, script
from tests.support import Harness, ManualClock, eventually, items, oldest_first, started

ASKER = """
    rules:
      - when: {from: answerer}
        do: [{report: "came back: {text}"}]
    otherwise:
      - send: {to: answerer, text: "{text}"}
"""


async def _ask(parley: Harness, tmp_path: Path, text: str = "what time is it?") -> None:
    await parley.hire("asker", brain=script(tmp_path, "asker", ASKER))
    await say(parley.owner, "asker", text)


async def _reports(parley: Harness) -> list[str]:
    shown = await get(parley.owner, "/conversations/asker")
    return [m["body"] for m in oldest_first(shown["messages"]) if m["kind"] == "report"]


async def _reported(parley: Harness, expected: str) -> bool:
    return await _reports(parley) == [f"came back: {expected}"]


async def _settled(parley: Harness) -> bool:
    runs = await get_all(parley.owner, "/runs")
    return bool(runs) and all(run["state"] not in ("queued", "running") for run in runs)


async def _answerer_runs(parley: Harness) -> list[dict[str, object]]:
    runs = await get_all(parley.owner, "/runs")
    return [run for run in runs if run["agent"] == "answerer"]


async def test_a_scripted_reply_goes_to_the_other_agent(parley: Harness, tmp_path: Path) -> None:
    rules = "otherwise: [{reply: 'scripted says {text}'}]"
    await parley.hire("answerer", brain=script(tmp_path, "answerer", rules))
    await _ask(parley, tmp_path)
    assert await eventually(lambda: _reported(parley, "scripted says what time is it?"))


async def test_a_command_brain_s_reply_goes_to_the_other_agent(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "answer.py"
    program.write_text("import sys\nsys.stdin.read()\nprint('command says noon')\n")
    await parley.hire("answerer", brain=f"command:{sys.executable} {program}")
    await _ask(parley, tmp_path)
    assert await eventually(lambda: _reported(parley, "command says noon"))


async def test_a_command_brain_that_prints_nothing_sends_nothing(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "quiet.py"
    program.write_text("import sys\nsys.stdin.read()\n")
    await parley.hire("answerer", brain=f"command:{sys.executable} {program}")
    await _ask(parley, tmp_path)
    assert await eventually(lambda: _settled(parley))
    [run] = await _answerer_runs(parley)
    assert run["state"] == "finished"
    assert await _reports(parley) == []
    assert len(await get_all(parley.owner, "/runs")) == 2  # the asker's turn and the answerer's


async def test_a_scripted_turn_without_a_reply_sends_nothing(
    parley: Harness, tmp_path: Path
) -> None:
    rules = "otherwise: [{remember: 'asked {text}'}]"
    await parley.hire("answerer", brain=script(tmp_path, "answerer", rules))
    await _ask(parley, tmp_path)
    assert await eventually(lambda: _settled(parley))
    assert await _reports(parley) == []
    assert len(await get_all(parley.owner, "/runs")) == 2


async def test_the_offline_brain_never_answers_an_agent(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("answerer", brain="offline")
    await _ask(parley, tmp_path)
    assert await eventually(lambda: _settled(parley))
    [run] = await _answerer_runs(parley)
    assert run["state"] == "finished"
    assert await _reports(parley) == []


async def test_a_model_brain_s_reply_goes_to_the_other_agent(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    replies = Script(replies=[Reply(text="the model says noon")])
    with serving(openai_app(replies)) as url:
        configured = settings.model_copy(update={"openai_base_url": f"{url}/v1"})
        async with started(configured, clock) as parley:
            await parley.hire("answerer", brain="openai:gpt-test")
            await _ask(parley, tmp_path)
            assert await eventually(lambda: _reported(parley, "the model says noon"))
    system = replies.bodies[0]["messages"][0]["content"]
    assert "your reply is sent to asker" in system


async def test_a_human_agent_s_answer_goes_to_the_other_agent(
    parley: Harness, tmp_path: Path
) -> None:
    ada = parley.client(await parley.add_person("ada"))
    await parley.hire("answerer", human="ada")
    await _ask(parley, tmp_path, "may I?")
    assert await eventually(lambda: _waiting(ada))
    [turn] = items(await get(ada, "/me/turns"))
    answered = await ada.post(f"/api/v1/runs/{turn['run']['id']}/answer", json={"text": "yes"})
    assert answered.status_code == 200, answered.text
    assert await eventually(lambda: _reported(parley, "yes"))


async def _waiting(client: httpx.AsyncClient) -> bool:
    return len(items(await get(client, "/me/turns"))) == 1
