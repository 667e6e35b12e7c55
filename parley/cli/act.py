"""parley act …: what a running turn does, from inside a command brain's process. One command
per action of the table (``parley.actions.table``), its arguments and help derived from it.

These commands authenticate with the run's token (``PARLEY_RUN_TOKEN``), never with a person's:
the hub derives the topic from the run, so without a run there is nothing to act in.
"""

from __future__ import annotations

import inspect
import json
import os
from enum import StrEnum
from typing import Any

import typer

from parley.actions.table import ACTIONS, Action, Kind, Param
from parley.cli.client import ApiClient
from parley.cli.output import console, reporting_errors, show
from parley.cli.state import CliState, JsonOption, given_text
from parley.cli.where import whereabouts
from parley.errors import Unauthorized

app = typer.Typer(
    help="Act from a running turn (a command brain's process): PARLEY_RUN_TOKEN authorises.",
    no_args_is_help=True,
)

STDIN_HELP = '; "-" reads it from stdin'


def _run_client(ctx: typer.Context) -> ApiClient:
    token = os.environ.get("PARLEY_RUN_TOKEN", "").strip()
    if not token:
        raise Unauthorized("a role token without a run has no topic: PARLEY_RUN_TOKEN is not set")
    state = ctx.find_root().obj
    url = state.url if isinstance(state, CliState) else None
    return ApiClient(url or os.environ.get("PARLEY_URL") or whereabouts().base_url, token)


VerboseOption = typer.Option(False, "--verbose", help="print what was done, in words")


def _act(
    ctx: typer.Context, action: Action, body: dict[str, Any], as_json: bool, verbose: bool
) -> None:
    """Silent on success unless asked: a command brain's stdout is its reply, and what it does
    must not end up in what it says. --json gives the ids of what was made or reached."""
    with reporting_errors():
        answer = _run_client(ctx).post(f"/act/{action.path}", body)
        if as_json or verbose:
            show(answer, as_json, lambda data: console.print(data["result"], markup=False))


def _option(param: Param) -> inspect.Parameter:
    """A parameter of the table as typer reads it: text and names are arguments, a flag is an
    option that is off unless given."""
    if param.kind is Kind.FLAG:
        default = typer.Option(False, f"--{param.name}", help=param.help)
    else:
        help_text = param.help + (STDIN_HELP if param.kind is Kind.TEXT else "")
        default = typer.Argument(... if param.required else param.default, help=help_text)
    kind = inspect.Parameter.KEYWORD_ONLY
    return inspect.Parameter(param.name, kind, default=default, annotation=param.kind.python_type)


def _command(action: Action) -> Any:
    def command(ctx: typer.Context, as_json: bool, verbose: bool, **given: Any) -> None:
        body = {
            param.name: given_text(given[param.name])
            if param.kind is Kind.TEXT
            else given[param.name]
            for param in action.params
        }
        _act(ctx, action, body, as_json, verbose)

    keyword = inspect.Parameter.KEYWORD_ONLY
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("ctx", keyword, annotation=typer.Context),
            *(_option(param) for param in action.params),
            inspect.Parameter("as_json", keyword, default=JsonOption, annotation=bool),
            inspect.Parameter("verbose", keyword, default=VerboseOption, annotation=bool),
        ]
    )
    command.__doc__ = action.help[0].upper() + action.help[1:] + "."
    return command


for _action in ACTIONS.values():
    app.command(_action.path)(_command(_action))


@app.command("input")
def show_input(ctx: typer.Context, as_json: bool = JsonOption) -> None:
    """What this turn answers: who said what, in which topic, for which root."""
    with reporting_errors():
        show(_run_client(ctx).get("/act/input"), as_json, _render_input)


def _render_input(given: dict[str, Any]) -> None:
    console.print(f"run {given['run_id']} of {given['agent']}, in {given['topic']}", markup=False)
    console.print(f"for: {given['root']}", markup=False)
    for said in given["said"]:
        console.print(f"{said['author']}: {said['text']}", markup=False)


class McpClient(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"


@app.command("mcp-config")
def mcp_config(
    ctx: typer.Context,
    client: McpClient = typer.Option(..., "--for", help="the command-line agent to configure"),
) -> None:
    """Print what Claude Code (its .mcp.json, or --mcp-config) or Codex (its -c options) reads
    to reach this turn's actions as an MCP server: /mcp, with PARLEY_RUN_TOKEN as the bearer,
    named, never written out."""
    state = ctx.find_root().obj
    given = state.url if isinstance(state, CliState) else None
    url = (given or os.environ.get("PARLEY_URL") or whereabouts().base_url).rstrip("/")
    if client is McpClient.CLAUDE:
        # Claude Code expands ${VAR} in .mcp.json: the token is read at each turn, not stored.
        server = {
            "type": "http",
            "url": "${PARLEY_URL}/mcp" if not given else f"{url}/mcp",
            "headers": {"Authorization": "Bearer ${PARLEY_RUN_TOKEN}"},
        }
        console.print(json.dumps({"mcpServers": {"parley": server}}, indent=2), markup=False)
        return
    console.print(
        f'-c mcp_servers.parley.url="{url}/mcp"'
        ' -c mcp_servers.parley.bearer_token_env_var="PARLEY_RUN_TOKEN"',
        markup=False,
    )
