"""run: a shell command in the workspace, started and ended as a command brain's process is,
against real processes: its environment, its output's bound, its timeout and its cancelling."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path

import pytest

from parley.brains import confinement
from parley.errors import Unavailable
from tests.brains.test_command_brain import all_gone, read_pids
from tests.tools.support import Place

PYTHON = shlex.quote(sys.executable)


def python(code: str) -> str:
    return f"{PYTHON} -c {shlex.quote(code)}"


# A process that ignores SIGTERM, writes its pid (and a newline) to `pids` and sleeps.
STUBBORN = python(
    "import os, signal, time\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "open('pids', 'a').write(f'{os.getpid()}\\n')\n"
    "time.sleep(60)\n"
)


async def test_a_command_runs_in_the_workspace_and_its_exit_code_is_read(place: Place) -> None:
    tools = place.tools()
    assert await tools.run("pwd; echo oops >&2; exit 3") == f"exit code 3\n{place.workspace}\noops"
    assert await tools.run("true") == "exit code 0\n(no output)"
    assert await tools.run("cat") == "exit code 0\n(no output)"  # stdin is /dev/null
    assert await tools.run("kill -9 $$") == "ended by signal 9 (SIGKILL)\n(no output)"


async def test_the_environment_is_the_allow_list_and_the_given_variables(place: Place) -> None:
    seen = json.loads(
        (
            await place.tools().run(python("import json, os; print(json.dumps(dict(os.environ)))"))
        ).split("\n", 1)[1]
    )
    assert "SECRET_KEY" not in seen and "PARLEY_RUN_TOKEN" not in seen
    assert seen["GIVEN"] == "given-value"
    assert seen["LANG"] == "C.UTF-8"
    temp = Path(seen.pop("TMPDIR"))
    assert temp.name.startswith("parley-run-") and not temp.exists()  # its own, gone after


async def test_a_timeout_ends_the_command_and_all_it_started(place: Place) -> None:
    # One child in the group, one detached in a session of its own: both ignore SIGTERM.
    command = f"{STUBBORN} & setsid {STUBBORN} & echo started; wait"
    result = await place.tools(run_timeout_seconds=1.5).run(command)
    assert result == "timed out after 1.5 s: the command and all it started were ended\nstarted"
    pids = await read_pids(place.workspace / "pids")
    assert len(pids) == 2
    assert await all_gone(pids)


async def test_an_endless_output_is_bounded_and_said_so(place: Place) -> None:
    command = "head -c 100000000 /dev/zero | tr '\\0' a; echo done >&2"
    result = await place.tools(max_output_bytes=1000).run(command)
    head, kept, note = result.split("\n")
    assert head == "exit code 0"
    assert kept == "a" * 1000
    assert note.startswith("[99999005 more bytes of output dropped: only the first 1000")


async def test_cancelling_a_run_ends_its_process_group(place: Place) -> None:
    run = asyncio.create_task(place.tools().run(f"{STUBBORN} & {STUBBORN}"))
    pids = await read_pids(place.workspace / "pids")
    while len(pids) < 2:
        await asyncio.sleep(0.02)
        pids = await read_pids(place.workspace / "pids")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert await all_gone(pids)


async def test_a_command_that_cannot_be_confined_is_unavailable(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(confinement, "landlock_abi", lambda: 0)
    with pytest.raises(Unavailable, match="Landlock"):
        await place.tools().run("touch made")
    assert not (place.workspace / "made").exists()
