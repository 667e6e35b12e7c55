"""parley run …, parley stop: the turns of agents, and following one until it ends."""

from __future__ import annotations

import json
from typing import Any

import typer

from parley.cli.following import (
    follow,
    leaving_on_interrupt,
    outcome,
    refuse_unfinished,
    stream_reply,
    tool_call_line,
)
from parley.cli.output import (
    console,
    errors,
    fields,
    reporting_errors,
    show,
    show_json,
    show_page,
    table,
)
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client, given_text
from parley.runs.model import RunState

app = typer.Typer(help="Runs: the turns of agents and node sessions.", no_args_is_help=True)

RUN_COLUMNS = ["id", "agent", "state", "topic_id", "created_at", "reason"]
RUN_FIELDS = [
    "id", "state", "agent", "node", "root", "topic", "input", "output", "reason",
    "created_at", "started_at", "finished_at",
]  # fmt: skip


def say_stopped(stopped: list[int], nothing: str) -> None:
    for run_id in stopped:
        console.print(f"stopped run {run_id}")
    if not stopped:
        console.print(nothing, markup=False)


@app.command("list")
def list_runs(
    ctx: typer.Context,
    agent: str | None = typer.Option(None, "--agent", help="only this agent's runs"),
    state: list[RunState] | None = typer.Option(None, "--state", help="only runs in these states"),
    topic: int | None = typer.Option(None, "--topic", help="only the runs in this topic"),
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Runs you may read, newest first."""
    with reporting_errors():
        states = [s.value for s in state or []]
        runs = client(ctx).get(
            "/runs", agent=agent, state=states, topic=topic, limit=limit, before=before
        )
        show_page(runs, as_json, lambda rows: table(rows, RUN_COLUMNS, "no runs"))


def _render_run(detail: Any) -> None:
    topic = detail["topic"]
    row = {
        **detail["run"],
        "root": detail["root"],
        "topic": f"{topic['kind']} {topic['id']}",
        "input": " / ".join(f"{m['author']}: {m['body']}" for m in detail["input"]) or None,
    }
    names = RUN_FIELDS
    if detail["run"].get("cut_short"):
        # Right under the output it marks: it is not a finished reply.
        state = detail["run"]["state"]
        row["cut short"] = f"{state} before it finished: the output is what it had said so far"
        at = RUN_FIELDS.index("output") + 1
        names = [*RUN_FIELDS[:at], "cut short", *RUN_FIELDS[at:]]
    fields(row, names)
    if detail.get("tool_calls"):
        console.out("\ntool calls", highlight=False)
        for call in detail["tool_calls"]:
            console.out(f"{call['seq']}. {tool_call_line(call)}", highlight=False)
    if detail.get("stderr"):
        # Last, as it was written: it can be long, and its lines are the process's own.
        console.out("\nstderr", highlight=False)
        console.out(detail["stderr"], highlight=False)


@app.command("show")
def show_run(ctx: typer.Context, run_id: int, as_json: bool = JsonOption) -> None:
    """One run: its state, agent, root, the text it took and what it answered; then its tool
    calls in order, and what a command brain wrote on stderr, if anything."""
    with reporting_errors():
        show(client(ctx).get(f"/runs/{run_id}"), as_json, _render_run)


@app.command("follow")
def follow_run(ctx: typer.Context, run_id: int, as_json: bool = JsonOption) -> None:
    """Follow a run you may read: its reply as it comes (its tool calls on stderr), then how it
    ended (an ended run's at once). Exits 4 if it was stopped, 7 if it failed. Ctrl-C stops
    following, not the run."""
    with reporting_errors(), leaving_on_interrupt(f"run {run_id} goes on"):
        api = client(ctx)
        said = False
        if as_json:
            end = follow(api, run_id)
            show_json(outcome(run_id, end))
        else:
            end, said = stream_reply(api, run_id)
        if end["state"] == "finished" and not as_json:
            errors.print(f"run {run_id} finished")
        refuse_unfinished(end, said)


def stop(ctx: typer.Context, run_id: int, as_json: bool = JsonOption) -> None:
    """Stop a run: the turn is cancelled, the session kept. Stopping an ended run does nothing."""
    with reporting_errors():
        answer = client(ctx).post(f"/runs/{run_id}/stop", {})
        show(
            answer,
            as_json,
            lambda data: say_stopped(data["stopped"], f"run {run_id} had already ended"),
        )


def turns(
    ctx: typer.Context,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Turns waiting for your answer (you are a human agent's person), oldest first; then the
    first tool calls waiting for your approval (parley approvals lists them all). --json and
    --before: the turns alone."""
    with reporting_errors():
        api = client(ctx)
        waiting = api.get("/me/turns", limit=limit, before=before)
        if as_json or before is not None:
            show_page(waiting, as_json, _render_turns)
            return
        approvals = api.get("/me/approvals", limit=limit)
        if waiting["items"] or not approvals["items"]:
            show_page(waiting, False, _render_turns)
        if approvals["items"]:
            show_page(approvals, False, _render_approvals)


def approvals(
    ctx: typer.Context,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Tool calls waiting for your approval, oldest first, with their exact arguments: of your
    conversations and tasks (an owner's: every one)."""
    with reporting_errors():
        waiting = client(ctx).get("/me/approvals", limit=limit, before=before)
        show_page(waiting, as_json, _render_approvals)


def _render_turns(details: list[Any]) -> None:
    rows = [
        {**d["run"], "root": d["root"], "input": " / ".join(m["body"] for m in d["input"])}
        for d in details
    ]
    table(rows, ["id", "agent", "root", "input"], "no turns wait")


def _render_approvals(approvals: list[Any]) -> None:
    rows = [
        {
            **a,
            "approval": a["id"],
            "run": a["run_id"],
            "call": f"{a['tool']}({json.dumps(a['arguments'], ensure_ascii=False)})",
            "until": a["deadline"],
        }
        for a in approvals
    ]
    table(rows, ["approval", "run", "agent", "call", "until"], "no call waits for your approval")
    if rows:
        console.print("parley approve ID, parley deny ID [--reason WHY], or parley stop RUN")


def approve(ctx: typer.Context, approval_id: int, as_json: bool = JsonOption) -> None:
    """Approve a tool call that waits for you: it acts, and its turn goes on."""
    with reporting_errors():
        decided = client(ctx).post(f"/approvals/{approval_id}/approve", {})
        show(decided, as_json, lambda a: console.print(f"approved {a['tool']} ({a['id']})"))


def deny(
    ctx: typer.Context,
    approval_id: int,
    reason: str | None = typer.Option(None, "--reason", help="why: the model reads it"),
    as_json: bool = JsonOption,
) -> None:
    """Deny a tool call that waits for you: it does not act, and the model reads the denial
    as its result (to end the turn instead: parley stop RUN)."""
    with reporting_errors():
        decided = client(ctx).post(f"/approvals/{approval_id}/deny", {"reason": reason})
        show(decided, as_json, lambda a: console.print(f"denied {a['tool']} ({a['id']})"))


def answer(
    ctx: typer.Context,
    run_id: int,
    text: str = typer.Argument(..., help='the answer; "-" reads it from stdin'),
    complete: bool = typer.Option(False, "--complete", help="also complete the task it works on"),
    as_json: bool = JsonOption,
) -> None:
    """Answer a turn of your human agent: the answer ends it, as a brain's reply would."""
    with reporting_errors():
        body = {"text": given_text(text), "complete": complete}
        ended = client(ctx).post(f"/runs/{run_id}/answer", body)
        show(ended, as_json, lambda run: console.print(f"answered run {run['id']}"))
