"""A turn that is stopped, fails or is interrupted keeps what it had said so far: on its run
(``output``, marked ``cut_short``), as a reply in its topic marked the same, and in the history
of the session's next turn; redacted like its stderr. A turn whose reply is undone with the rest
of it (an all-or-none turn's refused action) says that its reply was not kept."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path
from typing import Any

from parley.brains.prompt import CUT_SHORT
from parley.hub.reconciliation import reconcile
from tests.mesh.test_joined_node import joined
from tests.runs.support import follow, get, say, script
from tests.support import Harness, eventually, items

# First turn: says half a thought, then holds its turn until stopped. A later turn writes down
# the prompt it was given and answers at once.
HALF = """
import os, pathlib, sys, time
prompt = sys.stdin.read()
if pathlib.Path("said").exists():
    pathlib.Path("prompt.txt").write_text(prompt)
    print("a whole answer")
    sys.exit(0)
pathlib.Path("said").touch()
print("half a thought, key sk-abcdefghijklmnop", flush=True)
time.sleep(60)
"""
KEPT = "half a thought, key sk-[redacted]"
WITHIN = 30.0
CRASHING = """
import sys
sys.stdin.read()
print("partial answer", flush=True)
sys.exit(3)
"""


async def hire_command(
    parley: Harness, tmp_path: Path, name: str, program: str, **fields: Any
) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(program))
    hired = await parley.hire(name, brain=f"command:{sys.executable} {path}", **fields)
    return Path(hired["workspace"])


async def first_chunk(parley: Harness, run_id: int) -> str:
    """Once a chunk of the run's reply has reached the hub, its node holds it too. (Watched in
    the hub itself: the API's event stream comes whole through an in-process transport.)"""
    with parley.context.runtime.watch.watching(run_id) as events:
        while (event := await asyncio.wait_for(events.get(), WITHIN)).kind != "chunk":
            assert event.kind != "end", f"run {run_id} ended without saying anything"
    return event.text


async def kept_on(parley: Harness, run_id: int) -> dict[str, Any]:
    async def kept() -> bool:
        return (await get(parley.owner, f"/runs/{run_id}"))["run"]["output"] is not None

    assert await eventually(kept), f"run {run_id} kept nothing"
    run: dict[str, Any] = (await get(parley.owner, f"/runs/{run_id}"))["run"]
    return run


async def replies(parley: Harness, agent: str) -> list[tuple[str, bool]]:
    shown = await get(parley.owner, f"/conversations/{agent}")
    return [
        (m["body"], m["cut_short"])
        for m in reversed(items(shown["messages"]))
        if m["kind"] == "reply"
    ]


async def test_a_stopped_turn_keeps_what_it_had_said_and_the_next_turn_reads_it(
    parley: Harness, tmp_path: Path
) -> None:
    workspace = await hire_command(parley, tmp_path, "sleepy", HALF)
    queued = await say(parley.owner, "sleepy", "think aloud")
    await first_chunk(parley, queued["run_id"])
    stopped = await parley.owner.post(f"/api/v1/runs/{queued['run_id']}/stop", json={})
    assert stopped.json()["stopped"] == [queued["run_id"]]
    run = await kept_on(parley, queued["run_id"])
    assert (run["state"], run["output"], run["cut_short"]) == ("stopped", KEPT, True)
    assert await replies(parley, "sleepy") == [(KEPT, True)]
    # The next turn of the session reads it, marked, in its history.
    again = await say(parley.owner, "sleepy", "go on")
    _, end = await follow(parley.owner, again["run_id"])
    assert (end["state"], end["output"], end["cut_short"]) == ("finished", "a whole answer", False)
    prompt = (workspace / "prompt.txt").read_text()
    assert f"sleepy: {KEPT}\n{CUT_SHORT}\n" in prompt
    assert "(Your previous turn was stopped by a person before it finished.)" in prompt
    assert await replies(parley, "sleepy") == [(KEPT, True), ("a whole answer", False)]


async def test_a_crashed_command_keeps_what_it_printed(parley: Harness, tmp_path: Path) -> None:
    await hire_command(parley, tmp_path, "grumpy", CRASHING)
    queued = await say(parley.owner, "grumpy", "hello")
    chunks, end = await follow(parley.owner, queued["run_id"])
    assert "".join(chunks).strip() == "partial answer"
    assert (end["state"], end["output"], end["cut_short"]) == ("failed", "partial answer", True)
    assert "exited with 3" in end["reason"]
    assert await replies(parley, "grumpy") == [("partial answer", True)]
    listed = items(await get(parley.owner, "/runs?agent=grumpy"))
    assert [(r["output"], r["cut_short"]) for r in listed] == [("partial answer", True)]


async def test_a_refused_all_or_none_turn_says_its_reply_was_not_kept(
    parley: Harness, tmp_path: Path
) -> None:
    rules = "otherwise: [{reply: 'on it'}, {send: {to: nobody, text: hi}}]"
    await parley.hire("eager", brain=script(tmp_path, "eager", rules))
    queued = await say(parley.owner, "eager", "please")
    chunks, end = await follow(parley.owner, queued["run_id"])
    assert chunks == ["on it"]  # it streamed, then its turn was undone
    assert (end["state"], end["output"], end["cut_short"]) == ("failed", None, False)
    assert end["reason"].endswith("; its reply was not kept"), end["reason"]
    shown = await get(parley.owner, "/conversations/eager")
    notices = [m["body"] for m in items(shown["messages"]) if m["kind"] == "notice"]
    assert len(notices) == 1 and notices[0].endswith("its reply was not kept")
    assert await replies(parley, "eager") == []


async def test_a_joined_node_s_turn_interrupted_by_its_stop_keeps_what_it_had_said(
    parley: Harness, tmp_path: Path
) -> None:
    """The node stops (its turn cancelled) and its end crosses the mesh; the hub, back from a
    stop of its own, fails the run ``interrupted`` and what it had said stays."""
    async with joined(parley, tmp_path / "gamma"):
        await hire_command(parley, tmp_path, "remote", HALF, node="gamma")
        queued = await say(parley.owner, "remote", "think aloud")
        await first_chunk(parley, queued["run_id"])
    run = await kept_on(parley, queued["run_id"])
    assert run["state"] == "running"  # nobody ended it yet
    context = parley.context
    caught_up = context.runtime.scheduler.caught_up
    assert await reconcile(context.store, context.broker, parley.clock, caught_up) == 1
    run = (await get(parley.owner, f"/runs/{queued['run_id']}"))["run"]
    assert (run["state"], run["reason"]) == ("failed", "interrupted")
    assert (run["output"], run["cut_short"]) == (KEPT, True)
    assert await replies(parley, "remote") == [(KEPT, True)]
