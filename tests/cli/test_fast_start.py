"""Client commands start without the server's libraries: a command of the CLI loads typer and
rich, never the store, the API or what they bring (seconds of start-up on a small machine);
only its own command's module; and rich and http.client only to print a result and to ask for
one. Checked by what a fresh interpreter holds after parsing and running commands, not by a
clock (bench/cli_start.py has the times)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import parley
from parley.channels.model import BindingStatus
from parley.cli.bindings import BindingStatus as CliBindingStatus
from parley.cli.deliveries import DeliveryState as CliDeliveryState
from parley.deliveries.model import DeliveryState
from tests.probes import modules_loaded_by

SERVER_SIDE = ("uvicorn", "sqlalchemy", "fastapi", "alembic", "asyncpg", "pydantic_settings",
               "yaml", "parley.store", "parley.app", "parley.api", "parley.hub", "parley.startup",
               "parley.settings", "parley.brains.scripted")  # fmt: skip
# Libraries a client command does without, each tens of milliseconds of start-up: the standard
# library's http.client speaks to the server, and typer stays below the version that validates
# every parameter with pydantic.
CLIENT_SPARES = ("httpx", "httpcore", "pydantic", "pydantic_core")

PROBE = """
import json, sys
from parley.cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
except BaseException:
    pass
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_after(*args: str) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env |= {"PARLEY_URL": "http://127.0.0.1:9", "PARLEY_TOKEN": "t", "PARLEY_RUN_TOKEN": "t"}
    return modules_loaded_by(PROBE, *args, env=env, timeout=60)


@pytest.mark.parametrize(
    "args",
    [
        ["agent", "list"],
        ["agent", "list", "--help"],
        ["agent", "hire", "scribe", "--node", "local", "--brain", "scripted:x.yaml"],
        ["say", "scribe", "hello"],
        ["act", "send", "scribe", "hello"],
        ["delivery", "list", "--state", "failed"],
        ["binding", "list", "--status", "active"],
        ["--help"],
    ],
)
def test_a_client_command_loads_nothing_of_the_server(args: list[str]) -> None:
    loaded = _loaded_after(*args)
    assert "parley.cli.client" in loaded  # the probe did load the CLI
    heavy = sorted(m for m in loaded if m.startswith(SERVER_SIDE))
    assert heavy == []
    spared = sorted(m for m in loaded if m.split(".")[0] in CLIENT_SPARES)
    assert spared == []


@pytest.mark.parametrize(
    "args",
    [["--version"], ["--help"], ["agent", "list", "--help"], ["run", "follow", "--help"],
     ["say", "--help"], ["task", "create"], ["agent", "list", "--bogus"]],
)  # fmt: skip
def test_help_version_and_usage_errors_load_neither_rich_nor_http(args: list[str]) -> None:
    # rich (its console, tables, spinner) is loaded to print a result, http.client to ask the
    # server for one: help, the version and a usage error need neither.
    loaded = _loaded_after(*args)
    assert "parley.cli.main" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] == "rich" or m == "http.client") == []


def test_a_command_loads_its_own_module_only() -> None:
    loaded = _loaded_after("delivery", "list", "--help")
    commands = {m for m in loaded if m.startswith("parley.cli.")}
    others = {"parley.cli.agents", "parley.cli.talk", "parley.cli.runs", "parley.cli.tasks",
              "parley.cli.act", "parley.cli.channels", "parley.cli.serve"}  # fmt: skip
    assert "parley.cli.deliveries" in commands and commands & others == set()
    assert "parley.cli.agents" in _loaded_after("agent", "list", "--help")


def test_serve_still_loads_the_server() -> None:
    # The probe's check would see a server module: it is not blind.
    loaded = _loaded_after("serve", "--port", "0")
    assert {"uvicorn", "parley.app"} <= loaded


def test_the_cli_offers_the_delivery_states_of_the_store() -> None:
    assert [s.value for s in CliDeliveryState] == [s.value for s in DeliveryState]


def test_the_cli_offers_the_binding_statuses_of_the_store() -> None:
    assert [s.value for s in CliBindingStatus] == [s.value for s in BindingStatus]


def test_version_prints_the_package_version() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "parley", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (shown.returncode, shown.stdout) == (0, f"parley {parley.__version__}\n")


# What a node on a machine of its own does without: the hub's store and API, and the libraries
# only the hub serves with (A2A's server, MCP's), each up to a second of a node's start.
NODE_SPARES = ("sqlalchemy", "alembic", "asyncpg", "fastapi", "uvicorn", "parley.store",
               "parley.app", "parley.api", "parley.hub", "parley.startup", "a2a", "mcp",
               "parley.a2a", "mcp_types")  # fmt: skip


def test_a_joining_node_loads_nothing_of_the_hub() -> None:
    probe = "import json, sys, parley.cli.joining; print(json.dumps(sorted(sys.modules)))"
    loaded = modules_loaded_by(probe, timeout=60)
    assert "parley.node.turn_host" in loaded  # the probe did load the node
    assert sorted(m for m in loaded if m.split(".")[0] in NODE_SPARES or m in NODE_SPARES) == []
    assert sorted(m for m in loaded if m.startswith(tuple(f"{s}." for s in NODE_SPARES))) == []
