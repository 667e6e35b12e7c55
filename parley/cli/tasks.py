"""parley task …: work given to agents, readable by every person."""

from __future__ import annotations

from typing import Any

import typer

from parley.cli.client import ApiClient
from parley.cli.following import Spinner, leaving_on_interrupt
from parley.cli.output import console, reporting_errors, say_queued, show, show_page, table
from parley.cli.runs import say_stopped
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client, given_text
from parley.cli.talk import TEXT_HELP, converse, render_detail
from parley.conversations.model import TaskStatus
from parley.errors import Conflict, TurnFailed, Unavailable

app = typer.Typer(help="Tasks: work given to agents.", no_args_is_help=True)

_WAITING = "is open: waiting for it to end …"
TASK_COLUMNS = ["id", "agent", "status", "person", "text", "result"]


@app.command("create")
def create(
    ctx: typer.Context,
    agent: str,
    text: str = typer.Argument(..., help=TEXT_HELP),
    wait: bool = typer.Option(
        False,
        "--wait",
        help="wait for the task to end and print its result; exits 4 if it was cancelled or"
        " deleted, or at once if text sent for it was refused, 7 if it failed. Ctrl-C stops"
        " waiting, not the task.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Give an agent a task; prints "task ID (run N queued)" (with --wait, its result once it
    ends; --json, the task)."""
    with reporting_errors():
        api = client(ctx)
        task = api.post("/tasks", {"agent": agent, "text": given_text(text)})
        if not wait:
            show(task, as_json, lambda row: say_queued(f"task {row['id']}", row["run_id"]))
            return
        goes_on = f"task {task['id']} goes on (parley task show {task['id']})"
        with leaving_on_interrupt(goes_on):
            ended = _wait_for_end(api, task["id"], goes_on)
        show(ended, as_json, lambda row: console.print(row["result"] or "(no result)"))
        _refuse_unfinished(ended)


def _wait_for_end(api: ApiClient, task_id: int, goes_on: str) -> Any:
    """The task once it ended; a Conflict at the first refusal told in it meanwhile (text sent
    for it that did not reach its recipient), which the task goes on without."""
    spinner = Spinner(f"task {task_id} {_WAITING}")
    try:
        for event in api.stream_lines(f"/tasks/{task_id}/events"):
            if event.get("kind") == "refusal":
                raise Conflict(f"{event['text']}\n{goes_on}")
            if event.get("kind") == "end":
                return event["task"]
    finally:
        spinner.done()
    raise Unavailable(
        f"Parley at {api.base_url} stopped sending the events of task {task_id} before it ended;"
        " is 'parley serve' still running?"
    )


def _refuse_unfinished(task: Any) -> None:
    if task["status"] == TaskStatus.FAILED.value:
        raise TurnFailed(f"task {task['id']} failed: {task['result']}")
    if task["status"] == TaskStatus.CANCELLED.value:
        raise Conflict(f"task {task['id']} was cancelled: {task['result']}")
    if task["status"] == TaskStatus.OPEN.value:
        raise Conflict(f"task {task['id']} was closed: {task['closed_reason']}")


@app.command("say")
def say(
    ctx: typer.Context,
    task_id: int,
    text: str = typer.Argument(..., help=TEXT_HELP),
    wait: bool = typer.Option(
        False,
        "--wait",
        help="print the agent's reply as it comes, as 'parley say' does; exits 4 if its turn"
        " was stopped, 7 if it failed. Ctrl-C stops the turn and exits 130.",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Say more to the agent on an open task (its giver and owners may): its next turn continues
    the task's session, told so if the last one was stopped. Prints "task ID (run N queued)"
    (with --wait, the reply as it comes)."""
    with reporting_errors():
        api, path, said = client(ctx), f"/tasks/{task_id}/messages", given_text(text)
        if wait:
            converse(api, path, said, as_json)
            return
        queued = api.post(path, {"text": said})
        show(queued, as_json, lambda row: say_queued(f"task {task_id}", row["run_id"]))


@app.command("list")
def list_tasks(
    ctx: typer.Context,
    status: TaskStatus | None = typer.Option(None, "--status", help="only tasks in this state"),
    deleted: bool = typer.Option(False, "--deleted", help="deleted ones too (owners read them)"),
    parent: int | None = typer.Option(None, "--parent", help="the subtasks spawned in this topic"),
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Every task, or those with one status, newest first."""
    with reporting_errors():
        tasks = client(ctx).get(
            "/tasks",
            status=status and status.value,
            deleted=deleted,
            parent=parent,
            limit=limit,
            before=before,
        )
        show_page(tasks, as_json, lambda rows: table(rows, TASK_COLUMNS, "no tasks"))


@app.command("show")
def show_task(ctx: typer.Context, task_id: int, as_json: bool = JsonOption) -> None:
    """A task: its log, its subtasks, its agent conversations and its runs."""
    with reporting_errors():
        show(client(ctx).get(f"/tasks/{task_id}"), as_json, render_detail)


@app.command("cancel")
def cancel(ctx: typer.Context, task_id: int, as_json: bool = JsonOption) -> None:
    """Cancel an open task."""
    with reporting_errors():
        task = client(ctx).post(f"/tasks/{task_id}/cancel", {})
        show(task, as_json, _say_status)


def _say_status(task: Any) -> None:
    console.print(f"task {task['id']}: {task['status']}", markup=False)


@app.command("stop")
def stop(ctx: typer.Context, task_id: int, as_json: bool = JsonOption) -> None:
    """Stop the agent's turn on a task (the task stays open)."""
    with reporting_errors():
        answer = client(ctx).post(f"/tasks/{task_id}/stop", {})
        nothing = f"nothing was running on task {task_id}"
        show(answer, as_json, lambda data: say_stopped(data["stopped"], nothing))


@app.command("delete")
def delete(ctx: typer.Context, task_id: int, as_json: bool = JsonOption) -> None:
    """Delete a task: its runs end, its agent conversations close; history stays for owners."""
    with reporting_errors():
        client(ctx).delete(f"/tasks/{task_id}")
        show(
            {"deleted": task_id},
            as_json,
            lambda _: console.print(f"deleted task {task_id}", markup=False),
        )
