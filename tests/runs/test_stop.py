"""Stop: the turn is cancelled and its process ends, the session is kept, the
turn's text counts as handled, the next text continues the session with a notice. Idempotent;
a late 'finished' never overwrites 'stopped'."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from parley.node.messages import RunEvent, run_outcomes_subject
from parley.tokens import hash_token
from tests.runs.support import follow, get, holding_brain, say, script, token_of
from tests.support import Harness, eventually, items

SLEEPER = """\
import os, pathlib, sys, time
prompt = sys.stdin.read()
last = prompt.strip().splitlines()[-1]
pathlib.Path(os.environ["PARLEY_AGENT"] + ".pid").write_text(str(os.getpid()))
if "nap" in last:
    time.sleep(60)
print("stopped-notice" if "previous turn was stopped" in prompt else "no-notice")
print("heard " + last)
"""


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return True
    return state == "Z"  # exited, not yet reaped by its parent


async def _run_state(parley: Harness, run_id: int) -> str:
    state = (await get(parley.owner, f"/runs/{run_id}"))["run"]["state"]
    assert isinstance(state, str)
    return state


async def test_rule_8_stop_kills_a_command_brain_and_keeps_its_session(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "sleeper.py"
    program.write_text(SLEEPER)
    agent = await parley.hire("worker", brain=f"command:{sys.executable} {program}")
    pid_file = Path(agent["workspace"]) / "worker.pid"
    queued = await say(parley.owner, "worker", "take a nap")
    run_id = queued["run_id"]
    assert await eventually(lambda: _pid_written(pid_file))
    pid = int(pid_file.read_text())
    pid_file.unlink()

    stopped = await parley.owner.post(f"/api/v1/runs/{run_id}/stop")
    assert stopped.json() == {"stopped": [run_id]}
    assert await eventually(lambda: _async(_gone(pid)))
    shown = await get(parley.owner, f"/runs/{run_id}")
    assert (shown["run"]["state"], shown["run"]["reason"]) == ("stopped", "stopped by owner")
    # Idempotent: stopping again stops nothing and changes nothing.
    again = await parley.owner.post(f"/api/v1/runs/{run_id}/stop")
    assert again.json() == {"stopped": []}

    # The next text continues the same session, told that the last turn was stopped; the
    # stopped turn's text is not offered again.
    follow_up = await say(parley.owner, "worker", "are you there")
    _, end = await follow(parley.owner, follow_up["run_id"])
    assert end["state"] == "finished"
    assert end["output"].splitlines() == ["stopped-notice", "heard owner: are you there"]
    runs = items(await get(parley.owner, "/runs?agent=worker"))
    assert [r["state"] for r in runs] == ["finished", "stopped"]
    inputs = (await get(parley.owner, f"/runs/{follow_up['run_id']}"))["input"]
    assert [m["body"] for m in inputs] == ["are you there"]


async def _pid_written(path: Path) -> bool:
    return path.exists() and path.read_text().strip() != ""


async def _async(value: bool) -> bool:
    return value


async def test_rule_8_a_late_finish_never_overwrites_stopped(
    parley: Harness, tmp_path: Path
) -> None:
    hired = await parley.hire("napper", brain=holding_brain(tmp_path))
    queued = await say(parley.owner, "napper", "zzz")
    run_id = queued["run_id"]
    token = await token_of(hired["workspace"], run_id)
    response = await parley.owner.post("/api/v1/conversations/napper/stop")
    assert response.json() == {"stopped": [run_id]}
    # Its node's own end, with the run's token: too late all the same.
    late = RunEvent(
        run_id=run_id,
        kind="finished",
        text="done after all",
        run_token=token,
        started_as=hash_token(token),
    )
    for copy in ("1", "2"):  # two copies the broker does not take for one: recorded twice
        data = late.model_dump_json().encode()
        await parley.context.broker.send_durable(run_outcomes_subject("local"), data, copy)
    await parley.context.runtime.scheduler.caught_up()
    follow_up = await say(parley.owner, "napper", "next")  # a turn after the late event
    assert await eventually(lambda: _is(parley, follow_up["run_id"], "running"))
    shown = await get(parley.owner, f"/runs/{run_id}")
    assert (shown["run"]["state"], shown["run"]["output"]) == ("stopped", None)


async def _is(parley: Harness, run_id: int, state: str) -> bool:
    return await _run_state(parley, run_id) == state


async def test_rule_8_a_stopped_runs_token_can_no_longer_act(
    parley: Harness, tmp_path: Path
) -> None:
    program = tmp_path / "token.py"
    program.write_text(
        "import os, pathlib, time\n"
        "pathlib.Path('token').write_text(os.environ['PARLEY_RUN_TOKEN'])\n"
        "time.sleep(60)\n"
    )
    agent = await parley.hire("keeper", brain=f"command:{sys.executable} {program}")
    token_file = Path(agent["workspace"]) / "token"
    queued = await say(parley.owner, "keeper", "hold on")
    assert await eventually(lambda: _pid_written(token_file))
    token = token_file.read_text()
    as_run = parley.client(token)
    assert (await as_run.post("/api/v1/act/remember", json={"note": "n"})).status_code == 200
    await parley.owner.post(f"/api/v1/runs/{queued['run_id']}/stop")
    refused = await as_run.post("/api/v1/act/remember", json={"note": "after stop"})
    assert refused.status_code == 401
    assert "belongs to no running turn" in refused.json()["message"]


async def test_stop_is_for_people_who_can_read_the_topic(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("napper", brain=script(tmp_path, "napper", "otherwise: [{sleep: 30}]"))
    queued = await say(parley.owner, "napper", "zzz")
    ada = parley.client(await parley.add_person("ada"))
    refused = await ada.post(f"/api/v1/runs/{queued['run_id']}/stop")
    assert refused.status_code == 404
    assert await _run_state(parley, queued["run_id"]) in ("queued", "running")


async def test_force_retire_kills_the_running_process(parley: Harness, tmp_path: Path) -> None:
    program = tmp_path / "sleeper.py"
    program.write_text(SLEEPER)
    agent = await parley.hire("doomed", brain=f"command:{sys.executable} {program}")
    pid_file = Path(agent["workspace"]) / "doomed.pid"
    queued = await say(parley.owner, "doomed", "nap")
    assert await eventually(lambda: _pid_written(pid_file))
    pid = int(pid_file.read_text())
    await parley.owner.post("/api/v1/agents/doomed/retire", json={"force": True})
    assert await eventually(lambda: _async(_gone(pid)))
    assert await _run_state(parley, queued["run_id"]) == "stopped"
    assert os.path.exists(agent["workspace"])  # retiring keeps the workspace
