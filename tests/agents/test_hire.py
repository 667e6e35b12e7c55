"""Hiring: a validated, uniquely named agent with a workspace on its node, active once it exists."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from parley.brains.spec import absolute_brain
from parley.node.runner import NodeRunner
from tests.node_creds import node_key
from tests.support import Harness, eventually, items, lifecycle_is


async def _names(parley: Harness) -> list[str]:
    return [
        a["name"]
        for a in items((await parley.owner.get("/api/v1/agents")).json())
        if a["kind"] == "agent"
    ]


async def test_a_hired_agent_is_active_with_a_workspace_on_its_node(parley: Harness) -> None:
    agent = await parley.hire(
        "scribe", engram="writes things down", brain="offline", max_sessions=3
    )
    assert agent["lifecycle"] == "active"
    assert agent["node"] == "local"
    assert (agent["engram"], agent["brain"], agent["max_sessions"]) == (
        "writes things down",
        "offline",
        3,
    )
    workspace = Path(agent["workspace"])
    assert workspace.is_dir()
    assert workspace.name == "scribe"
    assert workspace.is_relative_to(parley.context.settings.data_dir.resolve())


async def test_brain_defaults_to_the_offline_brain(parley: Harness) -> None:
    assert (await parley.hire("scribe"))["brain"] == "offline"


@pytest.mark.parametrize(
    "brain",
    [
        "openai:gpt-4o-mini",
        "anthropic:claude-x",
        "command:sh my-agent.sh --json",
    ],
)
async def test_each_brain_kind_is_accepted(parley: Harness, brain: str) -> None:
    # No API key in tests: a model brain at its provider's own API is accepted only when allowed.
    assert (await parley.hire("scribe", brain=brain, allow_missing_key=True))["brain"] == brain


async def test_a_scripted_brain_is_checked_when_hiring(parley: Harness, tmp_path: Path) -> None:
    rules = tmp_path / "echo.yaml"
    rules.write_text("otherwise: [{reply: '{text}'}]")
    assert (await parley.hire("scribe", brain=f"scripted:{rules}"))["brain"] == f"scripted:{rules}"
    rules.write_text("rules: [{do: [{shout: loud}]}]")
    for brain, message in (
        ("scripted:rules/echo.yaml", "must be an absolute path"),
        (f"scripted:{tmp_path}/missing.yaml", "No such file or directory"),
        (f"scripted:{rules}", "each act is one of reply, send"),
    ):
        response = await parley.owner.post(
            "/api/v1/agents", json={"name": "other", "node": "local", "brain": brain}
        )
        assert response.status_code == 400
        assert message in response.json()["message"]


async def test_a_command_brains_program_is_checked_when_hiring(
    parley: Harness, tmp_path: Path
) -> None:
    """On the node that will run it (here the hub's own): a bare name on the PATH its turns
    get, an absolute path executable; a path within the workspace is the turn's to check."""
    plain = tmp_path / "notes.txt"
    plain.write_text("not a program")
    for brain, message in (
        ("command:no-such-program-h6 --json", "program 'no-such-program-h6' was not found"),
        (f"command:{tmp_path}/agent", f"program '{tmp_path}/agent' was not found"),
        (f"command:{plain}", f"program '{plain}' is not executable"),
        (f"command:{tmp_path}", f"program '{tmp_path}' is not executable"),
    ):
        response = await parley.owner.post(
            "/api/v1/agents", json={"name": "other", "node": "local", "brain": brain}
        )
        assert response.status_code == 400, brain
        assert response.json()["message"] == f"command brain {brain[8:]!r}: {message}"
    await parley.hire("scribe")
    changed = await parley.owner.patch(
        "/api/v1/agents/scribe", json={"brain": "command:no-such-program-h6"}
    )
    assert changed.status_code == 400 and "was not found" in changed.json()["message"]
    assert (await parley.hire("coder", brain="command:./bin/agent"))["brain"] == (
        "command:./bin/agent"
    )


async def test_a_scripted_brains_path_is_stored_in_one_spelling(
    parley: Harness, tmp_path: Path
) -> None:
    (tmp_path / "rules").mkdir()
    rules = tmp_path / "rules" / "echo.yaml"
    rules.write_text("otherwise: [{reply: '{text}'}]")
    written = f"scripted:{tmp_path}//rules/./../rules/echo.yaml"
    assert (await parley.hire("scribe", brain=written))["brain"] == f"scripted:{rules}"


def test_the_cli_makes_a_scripted_path_absolute_and_plain() -> None:
    assert absolute_brain("scripted:../rules/./echo.yaml", "/srv/team/") == (
        "scripted:/srv/rules/echo.yaml"
    )
    assert absolute_brain("scripted:/srv//echo.yaml", "/home") == "scripted:/srv/echo.yaml"
    home = os.path.expanduser("~")
    assert absolute_brain("scripted:~/echo.yaml", "/srv") == f"scripted:{home}/echo.yaml"
    assert absolute_brain("command:./agent", "/srv") == "command:./agent"


async def test_a_human_agent_belongs_to_a_person(parley: Harness) -> None:
    await parley.add_person("ada")
    agent = await parley.hire("ada-desk", human="ada")
    assert (agent["modality"], agent["human"], agent["brain"]) == ("human", "ada", "human")


async def test_names_are_unique_forever(parley: Harness) -> None:
    await parley.hire("scribe")
    await parley.owner.post("/api/v1/agents/scribe/retire", json={})
    response = await parley.owner.post("/api/v1/agents", json={"name": "scribe", "node": "local"})
    assert response.status_code == 409
    assert "an agent named 'scribe' already exists" in response.json()["message"]


BAD_HIRES: list[tuple[dict[str, Any], int, str]] = [
    ({"name": "Scribe"}, 400, "agent name 'Scribe' is invalid"),
    ({"name": "-x"}, 400, "agent name '-x' is invalid"),
    ({"name": "x" * 41}, 400, "is invalid"),
    ({"node": "nowhere"}, 404, "no node named 'nowhere'"),
    ({"brain": "gpt4"}, 400, "brain 'gpt4' is not a brain spec"),
    ({"brain": "openai:"}, 400, "brain 'openai' needs a model name"),
    ({"max_sessions": 0}, 400, "max sessions must be between 1 and 1000, not 0"),
    ({"max_sessions": "many"}, 400, "max_sessions"),
    ({"surge_threshold": 5}, 400, "only apply to a --template agent"),
    ({"clone_lifetime": "2h"}, 400, "only apply to a --template agent"),
    ({"template": True, "clone_lifetime": "soon"}, 400, "clone lifetime 'soon' is not a duration"),
    ({"template": True, "clone_lifetime": "0s"}, 400, "must be longer than zero"),
    ({"template": True, "surge_threshold": 0}, 400, "surge threshold must be between 1 and"),
    ({"human": "nobody"}, 404, "no person named 'nobody'"),
    ({"engram": "x" * 20_001}, 400, "at most 20000 characters"),
]


@pytest.mark.parametrize(("fields", "status", "says"), BAD_HIRES)
async def test_bad_hires_say_what_is_wrong_and_change_nothing(
    parley: Harness, fields: dict[str, Any], status: int, says: str
) -> None:
    body = {"name": "scribe", "node": "local", **fields}
    response = await parley.owner.post("/api/v1/agents", json=body)
    assert response.status_code == status
    assert says in response.json()["message"]
    assert await _names(parley) == []


async def test_a_human_agent_cannot_also_have_a_brain(parley: Harness) -> None:
    await parley.add_person("ada")
    response = await parley.owner.post(
        "/api/v1/agents", json={"name": "desk", "node": "local", "human": "ada", "brain": "offline"}
    )
    assert response.status_code == 400
    assert "give --human or --brain, not both" in response.json()["message"]


async def test_an_agent_hired_onto_an_absent_node_waits_as_hired(parley: Harness) -> None:
    """The node is registered but its process is gone: the agent is hired, not yet active."""
    data_dir = parley.context.settings.data_dir
    key = await node_key(parley, "beta")
    runner = NodeRunner("beta", parley.context.broker, key, data_dir / "beta", 3600)
    await runner.start()
    await runner.stop()
    agent = await parley.hire("scribe", node="beta")
    assert (agent["lifecycle"], agent["workspace"]) == ("hired", None)
    # When the node comes back it registers again and the waiting workspace is made.
    await runner.start()
    try:
        assert await eventually(lambda: lifecycle_is(parley, "scribe", "active"))
        agent = await parley.agent("scribe")
        assert agent["lifecycle"] == "active"
        assert Path(agent["workspace"]) == (data_dir / "beta" / "scribe").resolve()
    finally:
        await runner.stop()


async def test_racing_hires_of_one_name_make_exactly_one_agent(parley: Harness) -> None:
    body = {"name": "scribe", "node": "local"}
    responses = await asyncio.gather(
        *(parley.owner.post("/api/v1/agents", json=body) for _ in range(6))
    )
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [201, 409, 409, 409, 409, 409]
    for response in responses:
        if response.status_code == 409:
            assert "already exists" in response.json()["message"]
    assert await _names(parley) == ["scribe"]
