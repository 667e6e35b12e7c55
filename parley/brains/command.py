"""The ``command`` brain: any command-line agent, one process per turn.

The process runs in the agent's workspace, in its own process group (so stopping a turn ends
everything it started), reads the prompt on stdin and answers on stdout. It acts through
``parley act …`` with ``PARLEY_URL`` and ``PARLEY_RUN_TOKEN``, never through ``Actions``. It may
write its own session id into ``$PARLEY_SESSION_FILE``; the next turn gets it back as
``$PARLEY_BRAIN_SESSION``, so agents that keep their own history can resume it.

It is started through ``launcher.py`` (``processes.py``, as an agent's ``run`` tool is), which
confines it (``confinement.py``) and ends all it started when the turn ends or this process
dies; its environment is an allow-list (``environment.py``), and its process group is recorded
while it runs (``groups.py``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from parley.brains import groups, processes, prompt
from parley.brains.brain import Actions, Stream, Turn, TurnOutcome
from parley.brains.confinement import ProcessPolicy, parley_bin
from parley.brains.environment import TEMP, allowed_from, from_server
from parley.brains.spec import command_argv
from parley.brains.tail import Tail
from parley.errors import Invalid, Unavailable

_CHUNK = 4096
# A failed turn's reason quotes the end of its stderr; the run keeps much more (tail.py).
_REASON_TAIL = 4096


class CommandBrain:
    def __init__(
        self,
        command_line: str,
        grace_seconds: float = 0.2,
        policy: ProcessPolicy | None = None,
    ) -> None:
        self.command_line = command_line
        self.argv = command_argv(command_line)
        self.grace_seconds = grace_seconds
        self.policy = policy or ProcessPolicy()

    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        workspace = _workspace(turn)
        with _session_file() as session_file, processes.run_temp(self.policy.run_temp) as temp:
            env = {**self._environment(turn, session_file), TEMP: str(temp)}
            self._check_program(workspace, env["PATH"])
            process = await self._start(workspace, env, temp)
            noted = groups.record(self.policy.groups, turn.run_id, process.pid, turn.run_token)
            assert process.stderr is not None
            reading = asyncio.create_task(_read_stderr(process.stderr, turn.stderr))
            try:
                reply = await _converse(process, _prompt(turn), stream)
                code = await process.wait()
            finally:
                try:
                    # Also on success: a turn is one process, nothing it left behind outlives it.
                    await processes.stop_group(process, self.grace_seconds)
                    groups.forget(noted)
                finally:
                    # Stopped or killed, what it wrote up to then is kept: the pipe ends with it.
                    await processes.drained(reading)
            if code != 0:
                raise Unavailable(
                    f"command brain {self.command_line!r} exited with {code}: "
                    + _last(turn.stderr.text() or "", _REASON_TAIL),
                    exit_code=code,
                )
            return TurnOutcome(reply, _session_id(session_file, turn.brain_session_id))

    def _environment(self, turn: Turn, session_file: Path) -> dict[str, str]:
        """The allow-listed variables, the agent's declared ones, then the run's own."""
        server = self.policy.server_environment
        return {
            **allowed_from(server, self.policy.parley_bin),
            **turn.env,
            **from_server(turn.env_from_server, server, turn.agent),
            "PARLEY_URL": turn.parley_url,
            "PARLEY_RUN_TOKEN": turn.run_token,
            "PARLEY_RUN_ID": str(turn.run_id),
            "PARLEY_AGENT": turn.agent,
            "PARLEY_BRAIN_SESSION": turn.brain_session_id or "",
            "PARLEY_SESSION_FILE": str(session_file),
        }

    def _check_program(self, workspace: Path, search_path: str) -> None:
        check_program(self.command_line, workspace, search_path)

    async def _start(
        self, workspace: Path, env: dict[str, str], temp: Path
    ) -> asyncio.subprocess.Process:
        return await processes.start(
            self.policy,
            self.argv,
            cwd=workspace,
            env=env,
            temp=temp,
            stdin=asyncio.subprocess.PIPE,
            what=f"command brain {self.command_line!r}",
        )


def _workspace(turn: Turn) -> Path:
    if turn.workspace is None:
        raise Invalid(f"agent {turn.agent!r} has no workspace: a command brain runs in one")
    if not turn.workspace.is_dir():
        raise Unavailable(f"workspace {str(turn.workspace)!r} of agent {turn.agent!r} is missing")
    return turn.workspace


@contextlib.contextmanager
def _session_file() -> Iterator[Path]:
    """A fresh empty file the process may write its session id into; gone after the turn."""
    fd, name = tempfile.mkstemp(prefix="parley-session-")
    os.close(fd)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _session_id(session_file: Path, previous: str | None) -> str | None:
    # Writing nothing means "same session as before", not "no session".
    return session_file.read_text(errors="replace").strip() or previous


def _prompt(turn: Turn) -> str:
    parts = [prompt.system_prompt(turn, commands=True)]
    # A command agent keeps its own history under its session id; without one, it has none.
    if not turn.brain_session_id and turn.history:
        parts.append(prompt.transcript(turn.history))
    parts.append(prompt.new_text(turn))
    return "\n\n".join(parts) + "\n"


async def _converse(process: asyncio.subprocess.Process, text: str, stream: Stream) -> str:
    """Feed stdin while reading stdout (stderr is read alongside), so no pipe can fill up and
    deadlock."""
    assert process.stdin and process.stdout
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(_feed(process.stdin, text.encode()))
            reply = group.create_task(_read_reply(process.stdout, stream))
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None  # callers see the error itself, not a group
    return reply.result()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    # A program that does not read its prompt may exit first: that is its choice, not an error.
    # uvloop says so with a RuntimeError from a closed pipe's write, asyncio with a broken pipe.
    try:
        stdin.write(data)
        await stdin.drain()
        stdin.close()
        await stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        return
    except RuntimeError:
        if not stdin.is_closing():
            raise


async def _read_reply(stdout: asyncio.StreamReader, stream: Stream) -> str:
    # Incremental, so a character split between two reads is not turned into two "?".
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pieces: list[str] = []
    while True:
        data = await stdout.read(_CHUNK)
        piece = decoder.decode(data, final=not data)
        if piece:
            pieces.append(piece)
            await stream(piece)
        if not data:
            return "".join(pieces).strip()


async def _read_stderr(stderr: asyncio.StreamReader, tail: Tail) -> None:
    while data := await stderr.read(_CHUNK):
        tail.add(data)


def _last(text: str, characters: int) -> str:
    return text[-characters:].strip()


def check_program(command_line: str, workspace: Path | None, search_path: str) -> None:
    """The line's program found and executable where the launcher will look (a path with a '/'
    in the workspace, unless absolute; a bare name on ``search_path``): a clear error now, not
    an exit status later. Without a workspace (at hire) a path within it is left to the turn."""
    program = command_argv(command_line)[0]
    if "/" in program:
        if workspace is None and not program.startswith("/"):
            return
        candidate = (workspace or Path("/")) / program
        found = str(candidate) if candidate.exists() else None
    else:
        found = shutil.which(program, mode=os.F_OK, path=search_path)
    if found is None:
        raise Invalid(f"command brain {command_line!r}: program {program!r} was not found")
    if os.path.isdir(found) or not os.access(found, os.X_OK):
        raise Invalid(f"command brain {command_line!r}: program {program!r} is not executable")


def check_at_hire(command_line: str) -> None:
    """On the node that will run it (this process): its program is there, found on the PATH
    its turns will have."""
    check_program(command_line, None, allowed_from(os.environ, parley_bin())["PATH"])
