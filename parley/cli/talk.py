"""parley say, parley chat, parley conversation …: a person talking with an agent."""

from __future__ import annotations

import sys
from typing import Any

import typer

from parley.cli.client import ApiClient
from parley.cli.following import (
    INTERRUPTED,
    follow,
    kept,
    node_lost_notice,
    outcome,
    refuse_unfinished,
    stopping_on_interrupt,
    stream_reply,
)
from parley.cli.output import (
    console,
    fields,
    more_hint,
    reporting_errors,
    say_error,
    show,
    show_json,
    show_page,
    table,
)
from parley.cli.runs import say_stopped
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client, given_text
from parley.cli.typed import TypedLines
from parley.errors import ParleyError

conversation_app = typer.Typer(
    help="Your conversations with agents (one per agent).", no_args_is_help=True
)

TOPIC_FIELDS = ["id", "kind", "agent", "person", "root", "status", "result", "closed_reason"]
TEXT_HELP = 'what to say; "-" reads it from stdin'


def render_detail(detail: Any) -> None:
    """A topic with the latest page of its text, offshoots and runs, each shown oldest first,
    and how to read further back: a conversation, a task, an agent conversation."""
    topic_id = detail["topic"]["id"]
    fields(detail["topic"], TOPIC_FIELDS)
    console.print("\n[bold]messages[/bold]")
    render_messages(detail["messages"]["items"])
    more_hint(detail["messages"]["next"], f"parley topic messages {topic_id}")
    if detail["subtasks"]["items"]:
        columns = ["id", "agent", "status", "text"]
        _section(
            "subtasks",
            detail["subtasks"],
            columns,
            f"parley task list --deleted --parent {topic_id}",
        )
    if detail["agent_conversations"]["items"]:
        columns = ["thread_id", "sender", "agent", "status"]
        more = f"parley agent-conversation list --all --root {topic_id}"
        _section("agent conversations", detail["agent_conversations"], columns, more)
    _section(
        "runs",
        detail["runs"],
        ["id", "agent", "state", "reason"],
        f"parley run list --topic {topic_id}",
    )


def render_messages(newest_first: list[Any]) -> None:
    """A page of messages in reading order (the page comes newest first)."""
    table(list(reversed(newest_first)), ["author", "kind", "body"], "no messages")


def _section(title: str, page: Any, columns: list[str], more_command: str) -> None:
    console.print(f"\n[bold]{title}[/bold]")
    table(list(reversed(page["items"])), columns, f"no {title}")
    more_hint(page["next"], more_command)


def converse(api: ApiClient, path: str, text: str, as_json: bool) -> None:
    """Post text where a run answers it and stream its reply (a spinner while it waits, on a
    terminal); with ``as_json``, its outcome once it ends. Ctrl-C stops the run."""
    run_id = api.post(path, {"text": text})["run_id"]
    said = False
    with stopping_on_interrupt(api, run_id):
        if as_json:
            end = follow(api, run_id)
            show_json(outcome(run_id, end))
        else:
            end, said = stream_reply(api, run_id)
    refuse_unfinished(end, said)


def say(
    ctx: typer.Context,
    agent: str,
    text: str = typer.Argument(..., help=TEXT_HELP),
    as_json: bool = JsonOption,
) -> None:
    """Say something to an agent in your conversation with it and print its reply as it comes.

    On a terminal a spinner shows the run while it is queued or running. Ctrl-C stops the run
    and exits 130."""
    with reporting_errors():
        converse(client(ctx), f"/conversations/{agent}/messages", given_text(text), as_json)


def chat(ctx: typer.Context, agent: str) -> None:
    """Talk with an agent line by line, its replies streamed as they come.

    /stop, typed at any time, stops its current turn; /quit or the end of input leaves. Ctrl-C
    stops the current turn and leaves (exit 130).
    """
    with reporting_errors():
        api = client(ctx)
        api.get(f"/agents/{agent}")  # an unknown agent ends the chat before it starts
    typed = TypedLines(client(ctx))
    while (line := _next_line(typed)) is not None:
        if line == "/quit":
            break
        if line:
            _chat_turn(api, typed, agent, line)


def _next_line(typed: TypedLines) -> str | None:
    sys.stdout.write("you> ")
    sys.stdout.flush()
    try:
        line = typed.next()
    except KeyboardInterrupt:
        sys.stdout.write("\n")
        raise typer.Exit(INTERRUPTED) from None
    if line is None:
        sys.stdout.write("\n")
    return line


def _chat_turn(api: ApiClient, typed: TypedLines, agent: str, line: str) -> None:
    try:
        if line == "/stop":
            _stop(api, agent)
        else:
            _stream_reply(api, typed, agent, line)
    except ParleyError as exc:
        say_error(exc.message)


def _stream_reply(api: ApiClient, typed: TypedLines, agent: str, text: str) -> None:
    run_id = api.post(f"/conversations/{agent}/messages", {"text": text})["run_id"]
    sys.stdout.write(f"{agent}> ")
    chunks: list[str] = []
    with typed.during(run_id), stopping_on_interrupt(api, run_id):
        end = follow(api, run_id, lambda chunk: _write_chunk(chunks, chunk))
    if not chunks and end["output"]:
        sys.stdout.write(end["output"])  # it ended before we were watching
    sys.stdout.write("\n")
    if lost := node_lost_notice(end):
        console.print(f"({lost})", markup=False)
    elif end["state"] != "finished":
        said = kept(end, bool(chunks))
        console.print(f"({end['state']}: {end['reason']}{said})", markup=False)
    for refusal in end["refusals"]:
        console.print(f"(refused: {refusal})", markup=False)


def _write_chunk(chunks: list[str], chunk: str) -> None:
    chunks.append(chunk)
    sys.stdout.write(chunk)
    sys.stdout.flush()


def _stop(api: ApiClient, agent: str) -> None:
    stopped = api.post(f"/conversations/{agent}/stop", {})["stopped"]
    say_stopped(stopped, f"{agent} was not working on anything")


@conversation_app.command("list")
def list_conversations(
    ctx: typer.Context,
    deleted: bool = typer.Option(False, "--deleted", help="deleted ones too (owners read them)"),
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Your open conversations, newest first."""
    with reporting_errors():
        page = client(ctx).get("/conversations", deleted=deleted, limit=limit, before=before)
        columns = ["id", "agent", "person", "status", "created_at", "closed_reason"]
        show_page(page, as_json, lambda rows: table(rows, columns, "no conversations"))


@conversation_app.command("show")
def show_conversation(
    ctx: typer.Context,
    agent: str = typer.Argument(..., metavar="AGENT|ID", help="an agent, or a conversation's id"),
    as_json: bool = JsonOption,
) -> None:
    """Your conversation with an agent, or any conversation you may read by its id (owners read
    deleted ones): its messages and runs."""
    with reporting_errors():
        show(client(ctx).get(f"/conversations/{agent}"), as_json, render_detail)


@conversation_app.command("delete")
def delete_conversation(ctx: typer.Context, agent: str, as_json: bool = JsonOption) -> None:
    """Close your conversation with an agent: its runs end, its history stays for owners."""
    with reporting_errors():
        client(ctx).delete(f"/conversations/{agent}")
        show(
            {"deleted": agent},
            as_json,
            lambda _: console.print(f"deleted your conversation with {agent}", markup=False),
        )


@conversation_app.command("stop")
def stop_conversation(ctx: typer.Context, agent: str, as_json: bool = JsonOption) -> None:
    """Stop the agent's turn in your conversation (the session is kept)."""
    with reporting_errors():
        answer = client(ctx).post(f"/conversations/{agent}/stop", {})
        nothing = f"{agent} was not working on anything"
        show(answer, as_json, lambda data: say_stopped(data["stopped"], nothing))
