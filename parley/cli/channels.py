"""parley channel …: channel accounts and their users (owners), and the web channel's
conversations."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import typer

from parley.cli.output import console, reporting_errors, say_queued, show, table
from parley.cli.secret_files import read_secret
from parley.cli.state import JsonOption, client, given_text
from parley.errors import Invalid

app = typer.Typer(help="Channels: accounts, linked users, web conversations.", no_args_is_help=True)
account_app = typer.Typer(help="Channel accounts (owners).", no_args_is_help=True)
identity_app = typer.Typer(help="Channel users known as people (owners).", no_args_is_help=True)
web_app = typer.Typer(help="Conversations of the built-in web channel.", no_args_is_help=True)
app.add_typer(account_app, name="account")
app.add_typer(identity_app, name="identity")
app.add_typer(web_app, name="web")

ACCOUNT_COLUMNS = [
    "channel",
    "account_id",
    "default_agent",
    "has_token",
    "state",
    "last_error",
    "rate_limited_until",
    "last_outbound_at",
]
WEB_CONVERSATION_COLUMNS = ["id", "title", "person", "parent_id", "created_at"]


def _account(channel: str, account: str) -> str:
    return f"/channels/{quote(channel, safe='')}/accounts/{quote(account, safe='')}"


def _web(account: str) -> str:
    return f"/channels/web/{quote(account, safe='')}/conversations"


@account_app.command("set")
def set_account(
    ctx: typer.Context,
    channel: str,
    account: str,
    default_agent: str | None = typer.Option(
        None, "--default-agent", help="where messages go when no binding holds them"
    ),
    as_json: bool = JsonOption,
) -> None:
    """Make a channel account, or change its default agent."""
    with reporting_errors():
        made = client(ctx).put(f"{_account(channel, account)}", {"default_agent": default_agent})
        show(made, as_json, lambda row: console.print(_account_line(row), markup=False))


@account_app.command("add")
def add_account(
    ctx: typer.Context,
    channel: str = typer.Argument(help="discord, telegram, slack or matrix"),
    account: str = typer.Argument(help="your name for it (Matrix: the bot's user id)"),
    default_agent: str | None = typer.Option(
        None, "--default-agent", help="where messages go when no binding holds them"
    ),
    token_file: str | None = typer.Option(
        None, "--token-file", help="read its token from this file ('-': stdin), never from argv"
    ),
    as_json: bool = JsonOption,
) -> None:
    """Add a chat service's account (its token from a file or stdin), or change one."""
    with reporting_errors():
        secret = None if token_file is None else read_secret(token_file)
        made = client(ctx).put(_account(channel, account), {"default_agent": default_agent})
        if secret is not None:
            made = client(ctx).put(f"{_account(channel, account)}/token", {"token": secret})
        show(made, as_json, lambda row: console.print(_account_line(row), markup=False))


def _account_line(row: dict[str, Any]) -> str:
    agent = row["default_agent"] or "no default agent"
    return f"{row['channel']} account {row['account_id']}: {agent}"


@account_app.command("token")
def set_token(
    ctx: typer.Context,
    channel: str,
    account: str,
    token_file: str | None = typer.Option(
        None, "--file", help="read the token from this file ('-': stdin), never from argv"
    ),
    clear: bool = typer.Option(False, "--clear", help="forget the account's token"),
    as_json: bool = JsonOption,
) -> None:
    """Set, replace or forget a channel account's token (a Discord bot token)."""
    with reporting_errors():
        if clear == (token_file is not None):
            raise Invalid("give --file FILE (or --file - for stdin), or --clear")
        path = f"{_account(channel, account)}/token"
        if token_file is None:
            row = client(ctx).delete(path)
        else:
            row = client(ctx).put(path, {"token": read_secret(token_file)})
        show(row, as_json, lambda row: console.print(_token_line(row), markup=False))


def _token_line(row: dict[str, Any]) -> str:
    state = "token set" if row["has_token"] else "no token"
    return f"{row['channel']} account {row['account_id']}: {state}"


@account_app.command("list")
def list_accounts(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """Channel accounts with their default agent."""
    with reporting_errors():
        rows = client(ctx).get("/channels/accounts")
        show(rows, as_json, lambda r: table(r, ACCOUNT_COLUMNS, "none"))


@identity_app.command("link")
def link(ctx: typer.Context, channel: str, account: str, user: str, person: str) -> None:
    """Know a channel user as a person of this installation (the account's allow-list)."""
    with reporting_errors():
        path = f"{_account(channel, account)}/identities/{quote(user, safe='')}"
        client(ctx).put(path, {"person": person})
        console.print(f"{channel} user {user} on {account} is {person}", markup=False)


@identity_app.command("unlink")
def unlink(ctx: typer.Context, channel: str, account: str, user: str) -> None:
    """Forget a channel user: their messages are refused from now on."""
    with reporting_errors():
        client(ctx).delete(f"{_account(channel, account)}/identities/{quote(user, safe='')}")
        console.print(f"{channel} user {user} on {account} is no one now", markup=False)


@identity_app.command("list")
def identities(ctx: typer.Context, channel: str, account: str, as_json: bool = JsonOption) -> None:
    """An account's users known as people."""
    with reporting_errors():
        rows = client(ctx).get(f"{_account(channel, account)}/identities")
        show(rows, as_json, lambda r: table(r, ["user_id", "person"], "nobody linked"))


@web_app.command("open")
def open_conversation(
    ctx: typer.Context,
    title: str,
    account: str = typer.Option("home", "--account", help="the web account"),
    thread_of: int | None = typer.Option(None, "--thread-of", help="a thread under this one"),
    as_json: bool = JsonOption,
) -> None:
    """Open a web conversation (or a thread under one); prints its id."""
    with reporting_errors():
        path = _web(account)
        if thread_of is not None:
            path += f"/{thread_of}/threads"
        made = client(ctx).post(path, {"title": title})
        show(made, as_json, lambda row: console.print(str(row["id"]), markup=False))


@web_app.command("list")
def list_conversations(
    ctx: typer.Context,
    account: str = typer.Option("home", "--account", help="the web account"),
    as_json: bool = JsonOption,
) -> None:
    """Your web conversations on an account (owners: everyone's)."""
    with reporting_errors():
        rows = client(ctx).get(_web(account))
        show(rows, as_json, lambda r: table(r, WEB_CONVERSATION_COLUMNS, "no conversations"))


@web_app.command("say")
def say(
    ctx: typer.Context,
    conversation: int,
    text: str = typer.Argument(..., help="what to say; - reads stdin"),
    account: str = typer.Option("home", "--account", help="the web account"),
    as_json: bool = JsonOption,
) -> None:
    """Write in a web conversation; prints "web conversation ID (run N queued)". The reply is
    posted there (see web show)."""
    with reporting_errors():
        path = f"{_web(account)}/{conversation}/messages"
        queued = client(ctx).post(path, {"text": given_text(text)})
        made = f"web conversation {conversation}"
        show(queued, as_json, lambda q: say_queued(made, q["run_id"]))


@web_app.command("show")
def show_conversation(
    ctx: typer.Context,
    conversation: int,
    account: str = typer.Option("home", "--account", help="the web account"),
    as_json: bool = JsonOption,
) -> None:
    """A web conversation: its threads and what was said, oldest first."""
    with reporting_errors():
        found = client(ctx).get(f"{_web(account)}/{conversation}")
        show(found, as_json, _render_conversation)


def _render_conversation(found: dict[str, Any]) -> None:
    head = found["conversation"]
    console.print(f"{head['id']} {head['title']} ({head['person']})", markup=False)
    for thread in found["threads"]:
        console.print(f"  thread {thread['id']}: {thread['title']}", markup=False)
    for message in found["messages"]:
        console.print(f"{message['author']}: {message['body']}", markup=False)
