"""parley agent …"""

from __future__ import annotations

import os
from typing import Any

import typer

from parley.brains.spec import absolute_brain
from parley.cli.output import console, errors, fields, reporting_errors, show, show_page, table
from parley.cli.state import BeforeOption, JsonOption, LimitOption, client, given_text
from parley.errors import Invalid

app = typer.Typer(
    help="Agents: hire, change, move, retire, warn, clone; their memory.", no_args_is_help=True
)

AGENT_FIELDS = [
    "name", "kind", "lifecycle", "node", "modality", "human", "brain", "max_sessions", "template",
    "surge_threshold", "clone_lifetime", "clone_of", "expires_at", "workspace", "tools", "ask",
    "mcp", "env", "env_from_server", "warnings", "retired_reason", "retired_at", "created_at",
    "engram",
]  # fmt: skip
LIST_COLUMNS = ["name", "lifecycle", "node", "brain", "max_sessions", "template", "warnings"]


ENV_HELP = "NAME=VALUE for its command brain (NAME alone: the value in your environment)"
ENV_FROM_SERVER_HELP = "NAME its command brain takes from the server's environment at each turn"
BRAIN_HELP = "offline, scripted:FILE, openai:MODEL, anthropic:MODEL, command:LINE"
ALLOW_MISSING_KEY_HELP = "accept an openai:/anthropic: brain whose API key the server lacks"
TOOLS_HELP = (
    "its workspace tools, comma-separated, of read,list,find,write,edit,run (none: no tool);"
    " a new agent has read,list,find"
)


MCP_HELP = (
    "NAME=COMMAND (a stdio server its node starts) or NAME=https://URL: an MCP server whose"
    " tools its model brain is offered as NAME.tool"
)
MCP_HEADER_HELP = "NAME:Header=VARIABLE: an HTTP server's header, read from its node's environment"
ASK_HELP = (
    "its tools that wait for your approval before each call, comma-separated: workspace tools,"
    " its MCP servers, SERVER.tool (none: nothing asks); a new agent asks before run"
)


def _tools(given: str | None) -> list[str] | None:
    if given is None:
        return None
    # Imported only when given: a client command starts without the server's libraries.
    from parley.agents.tools import parse_tools

    return list(parse_tools(given))


def _ask(given: str | None) -> list[str] | None:
    if given is None:
        return None
    from parley.agents.tools import parse_ask  # as _tools: only when given

    return list(parse_ask(given))


def _mcp(given: list[str] | None, headers: list[str] | None) -> list[dict[str, Any]]:
    """``--mcp`` and ``--mcp-header`` as the API's list of servers."""
    if not given and not headers:
        return []
    from parley.agents.mcp import parse_server, with_headers  # as _tools: only when given

    servers = with_headers([parse_server(item) for item in given or []], headers or [])
    return [
        {
            "name": server.name,
            "command": server.command,
            "url": server.url,
            "headers_from_env": dict(server.headers),
        }
        for server in servers
    ]


def _show_mcp(row: Any) -> dict[str, Any]:
    """An agent's MCP servers as one field: NAME=COMMAND or NAME=URL, comma-separated."""
    shown = [f"{server['name']}={server['command'] or server['url']}" for server in row["mcp"]]
    return {**row, "mcp": ", ".join(shown) or None}


def _show_agent(row: Any) -> None:
    fields(_show_mcp(row), AGENT_FIELDS)


def _show_changed(row: Any, as_json: bool) -> None:
    """The agent, then on stderr what the server warned of (a missing API key)."""
    show(row, as_json, _show_agent)
    for notice in row.get("notices", []):
        errors.print(notice, markup=False)


def _env_values(given: list[str] | None) -> dict[str, str]:
    """``NAME=VALUE``, or ``NAME`` alone for the value this command was given in its own
    environment (so that a secret need not appear on a command line)."""
    values = {}
    for item in given or []:
        name, equals, value = item.partition("=")
        if not equals:
            if name not in os.environ:
                raise Invalid(f"--env {name}: give NAME=VALUE, or set {name} in your environment")
            value = os.environ[name]
        values[name] = value
    return values


@app.command("hire")
def hire(
    ctx: typer.Context,
    name: str,
    node: str = typer.Option(..., "--node", help="the node it lives and works on"),
    engram: str = typer.Option("", "--engram", help='its system prompt; "-" reads it from stdin'),
    brain: str | None = typer.Option(None, "--brain", help=BRAIN_HELP),
    max_sessions: int = typer.Option(1, "--max-sessions", help="sessions it may run at once"),
    template: bool = typer.Option(False, "--template", help="a blueprint that is only cloned"),
    surge_threshold: int | None = typer.Option(
        None, "--surge-threshold", help="queue length that hires a clone"
    ),
    clone_lifetime: str | None = typer.Option(
        None, "--clone-lifetime", help="how long a clone lives, e.g. 2h"
    ),
    human: str | None = typer.Option(None, "--human", help="a person who answers as this agent"),
    tools: str | None = typer.Option(None, "--tools", help=TOOLS_HELP),
    ask: str | None = typer.Option(None, "--ask", help=ASK_HELP),
    mcp: list[str] | None = typer.Option(None, "--mcp", help=MCP_HELP),
    mcp_header: list[str] | None = typer.Option(None, "--mcp-header", help=MCP_HEADER_HELP),
    env: list[str] | None = typer.Option(None, "--env", help=ENV_HELP),
    env_from_server: list[str] | None = typer.Option(
        None, "--env-from-server", help=ENV_FROM_SERVER_HELP
    ),
    allow_missing_key: bool = typer.Option(
        False, "--allow-missing-key", help=ALLOW_MISSING_KEY_HELP
    ),
    as_json: bool = JsonOption,
) -> None:
    """Hire an agent onto a node (owners)."""
    with reporting_errors():
        body = {
            "name": name,
            "node": node,
            "engram": given_text(engram),
            "brain": absolute_brain(brain, os.getcwd()) if brain else None,
            "max_sessions": max_sessions,
            "template": template,
            "surge_threshold": surge_threshold,
            "clone_lifetime": clone_lifetime,
            "human": human,
            "env": _env_values(env),
            "env_from_server": env_from_server or [],
            "tools": _tools(tools),
            "ask": _ask(ask),
            "mcp": _mcp(mcp, mcp_header),
            "allow_missing_key": allow_missing_key,
        }
        _show_changed(client(ctx).post("/agents", body), as_json)


@app.command("set")
def set_agent(
    ctx: typer.Context,
    name: str,
    engram: str | None = typer.Option(
        None, "--engram", help='its system prompt; "-" reads it from stdin'
    ),
    brain: str | None = typer.Option(None, "--brain", help=BRAIN_HELP),
    max_sessions: int | None = typer.Option(
        None, "--max-sessions", help="sessions it may run at once (running ones are not stopped)"
    ),
    env: list[str] | None = typer.Option(None, "--env", help=ENV_HELP),
    env_from_server: list[str] | None = typer.Option(
        None, "--env-from-server", help=ENV_FROM_SERVER_HELP
    ),
    unset_env: list[str] | None = typer.Option(
        None, "--unset-env", help="NAME no longer given to its command brain"
    ),
    tools: str | None = typer.Option(None, "--tools", help=TOOLS_HELP + "; the whole list"),
    ask: str | None = typer.Option(None, "--ask", help=ASK_HELP + "; the whole list"),
    mcp: list[str] | None = typer.Option(None, "--mcp", help=MCP_HELP + " (added or replaced)"),
    mcp_header: list[str] | None = typer.Option(None, "--mcp-header", help=MCP_HEADER_HELP),
    unset_mcp: list[str] | None = typer.Option(
        None, "--unset-mcp", help="NAME of an MCP server it no longer has"
    ),
    allow_missing_key: bool = typer.Option(
        False, "--allow-missing-key", help=ALLOW_MISSING_KEY_HELP
    ),
    as_json: bool = JsonOption,
) -> None:
    """Change an agent's settings from its next turn on; what is not given stays (owners). A
    node session (node:NAME) takes only --brain, --tools and variables. See them with: agent
    changes."""
    with reporting_errors():
        body: dict[str, Any] = {
            "env": _env_values(env),
            "env_from_server": env_from_server or [],
            "unset_env": unset_env or [],
            "mcp": _mcp(mcp, mcp_header),
            "unset_mcp": unset_mcp or [],
            "allow_missing_key": allow_missing_key,
        }
        if engram is not None:
            body["engram"] = given_text(engram)
        if brain is not None:
            body["brain"] = absolute_brain(brain, os.getcwd())
        if max_sessions is not None:
            body["max_sessions"] = max_sessions
        if tools is not None:
            body["tools"] = _tools(tools)
        if ask is not None:
            body["ask"] = _ask(ask)
        _show_changed(client(ctx).patch(f"/agents/{name}", body), as_json)


@app.command("changes")
def changes(
    ctx: typer.Context,
    name: str,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """What owners changed of an agent's settings (agent set), newest first: who, when, the old
    and new value (variables by name only)."""
    with reporting_errors():
        page = client(ctx).get(f"/agents/{name}/changes", limit=limit, before=before)
        columns = ["changed_at", "changed_by", "setting", "old", "new"]
        show_page(page, as_json, lambda rows: table(rows, columns, "no changes"))


@app.command("list")
def list_agents(
    ctx: typer.Context,
    lifecycle: list[str] | None = typer.Option(None, "--lifecycle", help="only these states"),
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """Every agent by name, retired ones included (they stay readable)."""
    with reporting_errors():
        agents = client(ctx).get("/agents", lifecycle=lifecycle or [], limit=limit, before=before)
        show_page(agents, as_json, lambda rows: table(rows, LIST_COLUMNS, "no agents yet"))


@app.command("show")
def show_agent(ctx: typer.Context, name: str, as_json: bool = JsonOption) -> None:
    """One agent in full."""
    with reporting_errors():
        show(client(ctx).get(f"/agents/{name}"), as_json, _show_agent)


@app.command("reassign")
def reassign(
    ctx: typer.Context,
    name: str,
    node: str = typer.Option(..., "--node", help="the node to move it to"),
    as_json: bool = JsonOption,
) -> None:
    """Move an agent with no turn running to another node; its queued text goes with it
    (owners)."""
    with reporting_errors():
        show(client(ctx).post(f"/agents/{name}/reassign", {"node": node}), as_json, _show_agent)


@app.command("retire")
def retire(
    ctx: typer.Context,
    name: str,
    force: bool = typer.Option(False, "--force", help="stop its running work now"),
    reason: str | None = typer.Option(None, "--reason", help="kept with the agent"),
    as_json: bool = JsonOption,
) -> None:
    """Retire an agent: it drains (no new work, running work finishes), then is retired (owners)."""
    with reporting_errors():
        body = {"force": force, "reason": reason}
        show(client(ctx).post(f"/agents/{name}/retire", body), as_json, _show_agent)


@app.command("warn")
def warn(
    ctx: typer.Context,
    name: str,
    reason: str = typer.Option(..., "--reason", help="what it did"),
    as_json: bool = JsonOption,
) -> None:
    """Warn an agent; at the configured count it is dismissed (owners)."""
    with reporting_errors():
        outcome = client(ctx).post(f"/agents/{name}/warnings", {"reason": reason})

        def render(data: Any) -> None:
            agent = data["agent"]
            verdict = "dismissed" if data["dismissed"] else agent["lifecycle"]
            console.print(
                f"{agent['name']}: warning {data['warnings']}; now {verdict}", markup=False
            )

        show(outcome, as_json, render)


@app.command("warnings")
def warnings(
    ctx: typer.Context,
    name: str,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """The warnings an agent was given, newest first."""
    with reporting_errors():
        page = client(ctx).get(f"/agents/{name}/warnings", limit=limit, before=before)
        columns = ["given_at", "given_by", "reason"]
        show_page(page, as_json, lambda rows: table(rows, columns, "no warnings"))


@app.command("clone")
def clone(
    ctx: typer.Context,
    template: str,
    name: str | None = typer.Option(None, "--name", help="default: TEMPLATE-N"),
    lifetime: str | None = typer.Option(None, "--lifetime", help="default: the template's"),
    as_json: bool = JsonOption,
) -> None:
    """Hire a clone of a template, with a lifetime (owners)."""
    with reporting_errors():
        body = {"name": name, "lifetime": lifetime}
        show(client(ctx).post(f"/agents/{template}/clones", body), as_json, _show_agent)


@app.command("remember")
def remember(
    ctx: typer.Context,
    name: str,
    note: str = typer.Argument(..., help='the note; "-" reads it from stdin'),
    as_json: bool = JsonOption,
) -> None:
    """Add a note to an agent's memory."""
    with reporting_errors():
        written = client(ctx).post(f"/agents/{name}/memory", {"note": given_text(note)})
        show(written, as_json, lambda _: console.print(f"{name} will remember it", markup=False))


@app.command("forget")
def forget(
    ctx: typer.Context, name: str, note_id: int = typer.Argument(..., help="its id")
) -> None:
    """Remove a note from an agent's memory (owners, or the person who wrote it); the ids are in
    `parley agent memory`."""
    with reporting_errors():
        client(ctx).delete(f"/agents/{name}/memory/{note_id}")
        console.print(f"{name} no longer remembers note {note_id}", markup=False)


@app.command("memory")
def memory(
    ctx: typer.Context,
    name: str,
    limit: int | None = LimitOption,
    before: str | None = BeforeOption,
    as_json: bool = JsonOption,
) -> None:
    """An agent's memory, newest first, with each note's origin (a person, or a run and the kind
    of topic it was working in). Every member reads it."""
    with reporting_errors():
        page = client(ctx).get(f"/agents/{name}/memory", limit=limit, before=before)
        columns = ["id", "written_at", "origin", "note"]
        show_page(page, as_json, lambda rows: table(rows, columns, "nothing remembered yet"))
