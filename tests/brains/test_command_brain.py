"""The command brain against real processes: small Python scripts run with this interpreter."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shlex
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from parley.actions.table import ACTIONS, AGENT_TOOLS, WORKSPACE_TOOLS
from parley.brains.brain import Said, Turn
from parley.brains.command import CommandBrain
from parley.errors import Invalid, Unavailable


class NoActions:
    """A command acts through `parley act`, never through the Actions it is handed."""

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        raise AssertionError("unused")


class Chunks:
    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, piece: str) -> None:
        self.pieces.append(piece)


def make_turn(
    workspace: Path | None,
    brain_session_id: str | None = None,
    history: list[Said] | None = None,
) -> Turn:
    return Turn(
        run_id=7,
        agent="ada",
        engram="You are Ada, a careful reviewer.",
        memory=[],
        history=history or [],
        new_text=[Said("bob", "please review")],
        root="bob's conversation",
        counterpart=None,
        was_stopped=False,
        brain_session_id=brain_session_id,
        workspace=workspace,
        run_token="run-token-123",
        parley_url="http://127.0.0.1:8765",
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def script(tmp_path: Path, body: str) -> str:
    """Write a Python script and return the command line that runs it."""
    path = tmp_path / f"agent_{len(list(tmp_path.glob('agent_*.py')))}.py"
    path.write_text(textwrap.dedent(body))
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


async def think(brain: CommandBrain, turn: Turn, stream: Chunks | None = None) -> tuple[str, str]:
    outcome = await brain.think(turn, NoActions(), stream or Chunks())
    return outcome.reply, outcome.brain_session_id or ""


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # Reparented to init, a killed grandchild may stay a zombie until init reaps it: it is dead.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:  # reaped between the two looks
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def all_gone(pids: list[int], within: float = 10.0) -> bool:
    """Whether every one of ``pids`` has ended (or is a zombie) within ``within`` seconds: the
    processes under test sleep a minute or more, so a loaded machine's slowness is not taken
    for a process left running."""
    for _ in range(int(within / 0.02)):
        if all(gone(pid) for pid in pids):
            return True
        await asyncio.sleep(0.02)
    return all(gone(pid) for pid in pids)


async def read_pids(path: Path) -> list[int]:
    for _ in range(500):  # the script starts and writes them within a few hundred ms
        if path.exists() and path.read_text().endswith("\n"):
            return [int(pid) for pid in path.read_text().split()]
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} was never written")


async def test_prompt_goes_in_on_stdin_and_the_reply_comes_out(
    tmp_path: Path, workspace: Path
) -> None:
    upper = script(tmp_path, "import sys; print(sys.stdin.read().upper())")
    history = [Said("bob", "earlier question"), Said("ada", "earlier answer")]
    reply, _ = await think(CommandBrain(upper), make_turn(workspace, history=history))
    assert reply.startswith("YOU ARE ADA, A CAREFUL REVIEWER.")
    assert "BOB: EARLIER QUESTION\nADA: EARLIER ANSWER\n\nBOB: PLEASE REVIEW" in reply
    assert reply.endswith("BOB: PLEASE REVIEW")


async def test_the_prompt_says_which_places_every_member_reads(
    tmp_path: Path, workspace: Path
) -> None:
    echo = script(tmp_path, "import sys; print(sys.stdin.read())")
    reply, _ = await think(CommandBrain(echo), make_turn(workspace))
    assert (
        "Shared places: a subtask's text, your memory and questions to a node are read by every"
        " member" in reply
    )


async def test_history_is_not_sent_to_an_agent_with_its_own_session(
    tmp_path: Path, workspace: Path
) -> None:
    echo = script(tmp_path, "import sys; print(sys.stdin.read())")
    turn = make_turn(workspace, brain_session_id="s-1", history=[Said("bob", "earlier question")])
    reply, _ = await think(CommandBrain(echo), turn)
    assert "earlier question" not in reply
    assert reply.endswith("bob: please review")


async def test_the_process_runs_in_the_workspace_with_the_run_environment(
    tmp_path: Path, workspace: Path
) -> None:
    dump = script(
        tmp_path,
        """
        import json, os
        names = ["PARLEY_URL", "PARLEY_RUN_TOKEN", "PARLEY_RUN_ID", "PARLEY_AGENT",
                 "PARLEY_BRAIN_SESSION", "PARLEY_SESSION_FILE"]
        print(json.dumps({"cwd": os.getcwd(), **{n: os.environ[n] for n in names}}))
        """,
    )
    reply, _ = await think(CommandBrain(dump), make_turn(workspace))
    seen = json.loads(reply)
    assert Path(seen.pop("cwd")).resolve() == workspace.resolve()
    assert Path(seen.pop("PARLEY_SESSION_FILE")).name.startswith("parley-session-")
    assert seen == {
        "PARLEY_URL": "http://127.0.0.1:8765",
        "PARLEY_RUN_TOKEN": "run-token-123",
        "PARLEY_RUN_ID": "7",
        "PARLEY_AGENT": "ada",
        "PARLEY_BRAIN_SESSION": "",
    }


async def test_the_brain_session_id_is_kept_between_turns(tmp_path: Path, workspace: Path) -> None:
    resume = script(
        tmp_path,
        """
        import os, sys
        sys.stdin.read()
        previous = os.environ["PARLEY_BRAIN_SESSION"]
        if not previous:  # a new session: name it; a resumed one writes nothing
            with open(os.environ["PARLEY_SESSION_FILE"], "w") as f:
                f.write("session-42\\n")
        print(f"resumed {previous!r}")
        """,
    )
    brain = CommandBrain(resume)
    reply, session = await think(brain, make_turn(workspace))
    assert (reply, session) == ("resumed ''", "session-42")
    reply, session = await think(brain, make_turn(workspace, brain_session_id=session))
    assert (reply, session) == ("resumed 'session-42'", "session-42")


class Gating(Chunks):
    """Chunks that open a gate as each one arrives: ``seen_N`` once N have."""

    def __init__(self, gates: Path) -> None:
        super().__init__()
        self._gates = gates

    async def __call__(self, piece: str) -> None:
        await super().__call__(piece)
        (self._gates / f"seen_{len(self.pieces)}").touch()


async def test_the_reply_is_streamed_as_it_is_written(tmp_path: Path, workspace: Path) -> None:
    """Each word is written only once the one before has come through as a chunk: a reply
    read only at the end would never get past the first gate (the brain then exits 5). A sleep
    between the words raced a loaded machine, which read all three at once."""
    chatty = script(
        tmp_path,
        f"""
        import os, sys, time
        for seen, word in enumerate(["one", "two", "three"]):
            deadline = time.monotonic() + 60
            while seen and not os.path.exists(os.path.join({str(tmp_path)!r}, f"seen_{{seen}}")):
                if time.monotonic() > deadline:
                    sys.exit(5)
                time.sleep(0.01)
            print(word, flush=True)
        """,
    )
    chunks = Gating(tmp_path)
    reply, _ = await think(CommandBrain(chatty), make_turn(workspace), chunks)
    assert reply == "one\ntwo\nthree"
    assert len(chunks.pieces) >= 3  # a chunk for each word at least
    assert "".join(chunks.pieces).strip() == reply


async def test_a_failing_command_is_unavailable_with_its_stderr(
    tmp_path: Path, workspace: Path
) -> None:
    failing = script(tmp_path, "import sys; sys.stderr.write('model quota exceeded'); sys.exit(3)")
    with pytest.raises(Unavailable, match="exited with 3: model quota exceeded"):
        await think(CommandBrain(failing), make_turn(workspace))


async def test_a_killed_process_leaves_what_it_wrote_on_stderr(
    tmp_path: Path, workspace: Path
) -> None:
    crashing = script(
        tmp_path,
        """
        import os, signal, sys
        sys.stderr.write("segfault ahead\\n")
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGKILL)
        """,
    )
    turn = make_turn(workspace)
    with pytest.raises(Unavailable, match="exited with -9: segfault ahead"):
        await think(CommandBrain(crashing), turn)
    assert turn.stderr.text() == "segfault ahead"


async def test_a_cancelled_turn_leaves_what_it_wrote_on_stderr(
    tmp_path: Path, workspace: Path
) -> None:
    marker = tmp_path / "wrote"
    waiting = script(
        tmp_path,
        f"""
        import pathlib, sys, time
        sys.stderr.write("thinking hard\\n")
        sys.stderr.flush()
        pathlib.Path({str(marker)!r}).write_text("\\n")
        time.sleep(60)
        """,
    )
    turn = make_turn(workspace)
    task = asyncio.create_task(think(CommandBrain(waiting), turn))
    await read_pids(marker)  # the file exists: stderr was written before it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert turn.stderr.text() == "thinking hard"


def _writing_then_sleeping(tmp_path: Path, marker: Path) -> str:
    return script(
        tmp_path,
        f"""
        import os, pathlib, sys, time
        sys.stderr.write("thinking hard\\n")
        sys.stderr.flush()
        pathlib.Path({str(marker)!r}).write_text(f"{{os.getpid()}}\\n")
        time.sleep(60)
        """,
    )


async def test_a_turn_stopped_while_its_process_starts_ends_it_and_keeps_its_stderr(
    tmp_path: Path, workspace: Path, pipes_held: asyncio.Event
) -> None:
    """asyncio's own answer to a cancel in that window, killing the launcher alone, left the
    brain it had started running, and the stop waited for it to end by itself."""
    marker = tmp_path / "wrote"
    turn = make_turn(workspace)
    task = asyncio.create_task(think(CommandBrain(_writing_then_sleeping(tmp_path, marker)), turn))
    [pid] = await read_pids(marker)  # the brain runs; its start waits for its pipes
    task.cancel()
    pipes_held.set()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(20):  # not the brain's minute
            await task
    assert await all_gone([pid])
    assert turn.stderr.text() == "thinking hard"


async def test_a_timeout_that_expires_while_a_process_starts_is_still_told_as_one(
    tmp_path: Path, workspace: Path, pipes_held: asyncio.Event
) -> None:
    marker = tmp_path / "wrote"
    brain = CommandBrain(_writing_then_sleeping(tmp_path, marker))

    async def released_once_written() -> list[int]:
        pids = await read_pids(marker)
        await asyncio.sleep(0.3)  # past the timeout below, which fires while the start waits
        pipes_held.set()
        return pids

    releasing = asyncio.create_task(released_once_written())
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.1):
            await think(brain, make_turn(workspace))
    assert await all_gone(await releasing)


async def test_a_missing_program_is_invalid(workspace: Path) -> None:
    with pytest.raises(Invalid, match="'no-such-agent-program' was not found"):
        await think(CommandBrain("no-such-agent-program --flag"), make_turn(workspace))


async def test_an_empty_command_line_or_no_workspace_is_invalid(tmp_path: Path) -> None:
    with pytest.raises(Invalid):
        CommandBrain("  ")
    with pytest.raises(Invalid, match="no workspace"):
        await think(CommandBrain("true"), make_turn(None))
    with pytest.raises(Unavailable, match="missing"):
        await think(CommandBrain("true"), make_turn(tmp_path / "absent"))


async def test_stopping_kills_the_process_and_its_grandchildren(
    tmp_path: Path, workspace: Path
) -> None:
    pid_file = tmp_path / "pids"
    spawner = script(
        tmp_path,
        f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        with open({str(pid_file)!r}, "w") as f:
            f.write(f"{{os.getpid()}} {{child.pid}}\\n")
        time.sleep(60)
        """,
    )
    task = asyncio.create_task(think(CommandBrain(spawner), make_turn(workspace)))
    pids = await read_pids(pid_file)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await all_gone(pids)


async def test_a_process_ignoring_sigterm_is_killed_after_the_grace(
    tmp_path: Path, workspace: Path
) -> None:
    pid_file = tmp_path / "pids"
    stubborn = script(
        tmp_path,
        f"""
        import os, signal, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open({str(pid_file)!r}, "w") as f:
            f.write(f"{{os.getpid()}}\\n")
        time.sleep(60)
        """,
    )
    task = asyncio.create_task(
        think(CommandBrain(stubborn, grace_seconds=0.1), make_turn(workspace))
    )
    pids = await read_pids(pid_file)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await all_gone(pids)


async def test_a_failing_stream_kills_the_process(tmp_path: Path, workspace: Path) -> None:
    pid_file = tmp_path / "pids"
    talker = script(
        tmp_path,
        f"""
        import os, time
        with open({str(pid_file)!r}, "w") as f:
            f.write(f"{{os.getpid()}}\\n")
        print("hello", flush=True)
        time.sleep(60)
        """,
    )

    async def broken(piece: str) -> None:
        raise ConnectionError("the chat went away")

    with pytest.raises(ConnectionError, match="went away"):
        await CommandBrain(talker).think(make_turn(workspace), NoActions(), broken)
    assert await all_gone(await read_pids(pid_file))


async def test_the_prompt_names_the_parley_act_commands_of_the_table(
    tmp_path: Path, workspace: Path
) -> None:
    """Parley's own actions; not the workspace tools, even on the agent's list: a command brain
    works in its workspace with tools of its own."""
    echo = script(tmp_path, "import sys; print(sys.stdin.read())")
    turn = dataclasses.replace(make_turn(workspace), tools=AGENT_TOOLS + WORKSPACE_TOOLS)
    reply, _ = await think(CommandBrain(echo), turn)
    for action in ACTIONS.values():
        listed = f"- {action.command_line()}: {action.help}" in reply
        assert listed == (action.name in AGENT_TOOLS)
    assert "- parley act spawn AGENT TEXT [--thread]: give an agent a subtask" in reply
    assert "parley act input --json" in reply
    assert "spawn(agent, text, thread=false)" not in reply  # a tool's name, not a command


def test_a_program_gone_before_its_prompt_is_written_is_no_failure_on_uvloop() -> None:
    """`parley serve` runs on uvloop, whose pipe to a program that exited refuses a write with a
    RuntimeError (asyncio's with a broken pipe): the reply it gave stands either way."""
    import uvloop

    from parley.brains.command import _feed

    async def feed_a_gone_program() -> bool:
        process = await asyncio.create_subprocess_exec("true", stdin=asyncio.subprocess.PIPE)
        await process.wait()
        assert process.stdin is not None
        for _ in range(500):  # until uvloop noticed the pipe's end went away
            if process.stdin.is_closing():
                break
            await asyncio.sleep(0.01)
        await _feed(process.stdin, b"the prompt")
        return process.stdin.is_closing()

    assert uvloop.run(feed_a_gone_program())
