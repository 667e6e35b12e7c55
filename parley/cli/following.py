"""Waiting on a run from the CLI: its events followed, a spinner while it is queued or running
(on a terminal only), its reply written as it comes, and Ctrl-C handled the conventional way."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from parley.cli.client import ApiClient
from parley.cli.output import console, say_error, say_note
from parley.errors import Conflict, ParleyError, TurnFailed, Unavailable
from parley.runs.model import NODE_LOST

if TYPE_CHECKING:
    from rich.status import Status

# What a shell expects of a command that SIGINT ended (128 + 2).
INTERRUPTED = 130


def follow(
    api: ApiClient,
    run_id: int,
    on_chunk: Callable[[str], None] | None = None,
    on_state: Callable[[str], None] | None = None,
    on_tool: Callable[[dict[str, Any]], None] | None = None,
    on_approval: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """Follow a run's events, handing each chunk of its reply to ``on_chunk``, each state it
    is in while open to ``on_state``, each tool call as it ends to ``on_tool`` and each call
    that asks first, when it asks and when it is decided, to ``on_approval``; the end
    event, with the refusals told in the run's root meanwhile (``refusals``: text sent from
    there that did not reach its recipient)."""
    refusals: list[str] = []
    for event in api.stream_lines(f"/runs/{run_id}/events"):
        kind = event.get("kind")
        if kind == "end":
            return {**event, "refusals": refusals}
        if kind == "refusal":
            refusals.append(event["text"])
        if kind == "chunk" and on_chunk is not None:
            on_chunk(event["text"])
        if kind == "state" and on_state is not None:
            on_state(event["state"])
        if kind == "tool" and on_tool is not None:
            on_tool(event)
        if kind == "approval" and on_approval is not None:
            on_approval(event)
    raise Unavailable(
        f"Parley at {api.base_url} stopped sending the events of run {run_id} before it ended;"
        " is 'parley serve' still running?"
    )


# After a turn that did not finish, when it had said something: that it stays, marked.
KEPT = "what it had said so far is kept"


def outcome(run_id: int, end: Any) -> dict[str, Any]:
    return {
        "run": run_id,
        "state": end["state"],
        "reply": end["output"],
        "cut_short": end.get("cut_short", False),
        "reason": end["reason"],
        "refusals": end["refusals"],
    }


def refuse_unfinished(end: Any, said: bool = False) -> None:
    """A stopped turn is a conflict (exit 4); a failed one has a status of its own (exit 7), apart
    from an unreachable server (exit 6). Either says whether what it had ``said`` stays. A turn
    that ended well while text sent from its root was refused is a conflict too, each refusal
    said: the reply alone may say all went well."""
    if end["state"] == "stopped":
        raise Conflict(f"the turn was stopped ({end['reason']}){kept(end, said)}")
    if end["state"] == "failed":
        failed = f"the turn failed: {end['reason']}{kept(end, said)}"
        raise TurnFailed(node_lost_notice(end) or failed)
    if end["refusals"]:
        raise Conflict("\n".join(end["refusals"]))


def kept(end: Any, said: bool) -> str:
    """After the reason of a turn that did not finish: that what it had said stays, when it
    does. A failed turn's is on its end already; a stopped turn's node sends it just after the
    stop, so what was ``said`` (streamed) is kept."""
    stays = end.get("cut_short") or (said and end["state"] == "stopped")
    return f"; {KEPT}" if stays else ""


def node_lost_notice(end: Any) -> str | None:
    """What the person who waited is told of a turn failed with its node lost: where their text
    is and what they can do about it."""
    if end["state"] != "failed" or end["reason"] != NODE_LOST or not end.get("node"):
        return None
    return (
        f"node {end['node']} stopped answering; your text waits for it, or move the agent"
        f" with `parley agent reassign {end['agent']} --node NODE`"
    )


class Spinner:
    """A transient spinner on stdout while nothing is written, only when stdout is a terminal:
    scripts reading our output get no control characters."""

    def __init__(self, text: str) -> None:
        self._status: Status | None = None
        if sys.stdout.isatty():
            self._status = console.status(text)
            self._status.start()

    def say(self, text: str) -> None:
        if self._status is not None:
            self._status.update(text)

    def done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


def tool_call_line(call: dict[str, Any]) -> str:
    """``read({"path": "a.md"}): 120 bytes in 3 ms``, or why it was refused."""
    done = f"{call['tool']}({call['arguments']})"
    if call.get("error"):
        return f"{done}: refused, {call['error']} ({call['duration_ms']} ms)"
    return f"{done}: {call['result_bytes']} bytes in {call['duration_ms']} ms"


def approval_line(approval: dict[str, Any]) -> str:
    """``[approval 7] run({"command": "make"}) waits for you: parley approve 7 or parley deny
    7``, or how it was decided."""
    head = f"[approval {approval['id']}] {approval['tool']}({approval['arguments']})"
    if approval["state"] == "waiting":
        number = approval["id"]
        return f"{head} waits for you: parley approve {number} or parley deny {number}"
    if approval["decided_by"] is None:
        return f"{head} denied: nobody answered in time"
    why = f" ({approval['reason']})" if approval.get("reason") else ""
    return f"{head} {approval['state']} by {approval['decided_by']}{why}"


def stream_reply(api: ApiClient, run_id: int) -> tuple[Any, bool]:
    """Write a run's reply to stdout as it comes, a spinner naming the run until it does, and
    each tool call to stderr as it ends (stdout is the reply alone); then its end event, and
    whether anything was written. A run that ended before we watched has its output written
    whole (what it had said, if it was cut short)."""
    spinner = Spinner(f"run {run_id} …")
    written: list[str] = []

    def write(chunk: str) -> None:
        spinner.done()
        written.append(chunk)
        sys.stdout.write(chunk)
        sys.stdout.flush()

    def tool(call: dict[str, Any]) -> None:
        spinner.done()
        say_note(f"[tool] {tool_call_line(call)}")

    def approval(asked: dict[str, Any]) -> None:
        spinner.done()
        say_note(approval_line(asked))

    def state(now: str) -> None:
        spinner.say(f"run {run_id} {now} …")

    try:
        end = follow(api, run_id, write, state, tool, approval)
    finally:
        spinner.done()
    if not written and (end["state"] == "finished" or end["output"]):
        written.append(end["output"] or "(no reply)")
        sys.stdout.write(written[-1])
    if written and not written[-1].endswith("\n"):
        sys.stdout.write("\n")
    sys.stdout.flush()
    return end, bool(written)


@contextmanager
def stopping_on_interrupt(api: ApiClient, run_id: int) -> Iterator[None]:
    """Ctrl-C stops the run, says so and exits 130; a second Ctrl-C, whenever it comes after
    the first (even while the first is still unwinding), leaves at once, exit 130 too; one
    after the stop was sent changes nothing.

    The second is a signal handler the first installs, not a second KeyboardInterrupt: one
    raised between the first's raise and its handling would escape every ``except``. After the
    stop, SIGINT is ignored: Python's exit puts back the default handler of a signal it handles
    (not of one ignored), and a late Ctrl-C would kill the process then (exit -2, not 130)."""

    def leave_now(signum: int, frame: object) -> None:
        with contextlib.suppress(Exception):  # a write it interrupted may refuse a second
            say_note(f"left without stopping run {run_id}")
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(INTERRUPTED)

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, leave_now)
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        previous = None  # signals reach the main thread alone: nothing to handle here
    else:
        previous = signal.signal(signal.SIGINT, first)
    interrupted = False
    try:
        yield
    except KeyboardInterrupt:
        interrupted = True
        sys.stdout.write("\n")
        sys.stdout.flush()
        try:
            stopped: bool | None = bool(api.post(f"/runs/{run_id}/stop", {})["stopped"])
            refused = None
        except ParleyError as exc:
            stopped, refused = None, exc.message
        if previous is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the stop is sent: we are leaving
        if refused is not None:
            say_error(f"run {run_id} was not stopped: {refused}")
        else:
            say_note(f"stopped run {run_id}" if stopped else f"run {run_id} had ended")
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if previous is not None and not interrupted:
            signal.signal(signal.SIGINT, previous)


@contextmanager
def leaving_on_interrupt(what_goes_on: str) -> Iterator[None]:
    """Ctrl-C stops waiting (exit 130), not what we waited on."""
    try:
        yield
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        say_note(f"stopped waiting; {what_goes_on}")
        raise typer.Exit(INTERRUPTED) from None
