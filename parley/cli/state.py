"""What the global options leave for the subcommands: how to build the API client."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import typer

from parley.cli.client import ApiClient, client_from_environment

JsonOption = typer.Option(False, "--json", help="print JSON for scripts")
LimitOption = typer.Option(None, "--limit", help="at most this many, 1 to 500 (default 50)")
BeforeOption = typer.Option(
    None, "--before", help="the next page: the cursor a 'more:' line (or --json's next) gave"
)


@dataclass
class CliState:
    url: str | None = None
    token: str | None = None

    def client(self) -> ApiClient:
        return client_from_environment(self.url, self.token)


def client(ctx: typer.Context) -> ApiClient:
    state = ctx.find_root().obj
    assert isinstance(state, CliState)
    return state.client()


def given_text(value: str) -> str:
    """A text argument as given, or, for "-", everything on stdin (for long prompts)."""
    return sys.stdin.read().rstrip("\n") if value == "-" else value
