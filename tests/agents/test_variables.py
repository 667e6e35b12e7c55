"""Variables an owner declares for an agent's command brain: stored with the agent, shown by
name only, changed with PATCH (``agent set``), given to its process at each turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runs.support import say_and_wait
from tests.support import Harness

SECRET = "sk-live-0123456789"


async def _patch(parley: Harness, name: str, **body: Any) -> Any:
    return await parley.owner.patch(f"/api/v1/agents/{name}", json=body)


def _env_brain(tmp_path: Path) -> str:
    """A command brain answering with the declared variables it sees, as JSON."""
    program = tmp_path / "env_brain.py"
    program.write_text(
        "import json, os\n"
        "print(json.dumps({k: v for k, v in os.environ.items() if k.startswith('APP_')}))\n"
    )
    return f"command:{sys.executable} {program}"


async def test_declared_variables_are_shown_by_name_never_by_value(parley: Harness) -> None:
    hired = await parley.hire(
        "coder", env={"APP_KEY": SECRET, "APP_MODE": "fast"}, env_from_server=["APP_REGION"]
    )
    assert (hired["env"], hired["env_from_server"]) == (["APP_KEY", "APP_MODE"], ["APP_REGION"])
    shown = await parley.owner.get("/api/v1/agents/coder")
    listed = await parley.owner.get("/api/v1/agents")
    for text in (json.dumps(hired), shown.text, listed.text):
        assert SECRET not in text and "fast" not in text


async def test_patch_declares_replaces_and_unsets(parley: Harness) -> None:
    await parley.hire("coder", env={"APP_KEY": "one", "APP_OLD": "x"})
    changed = await _patch(
        parley,
        "coder",
        env={"APP_NEW": "two"},
        env_from_server=["APP_KEY"],  # was a stored value, now the server's
        unset_env=["APP_OLD"],
    )
    assert changed.status_code == 200, changed.text
    agent = changed.json()
    assert (agent["env"], agent["env_from_server"]) == (["APP_NEW"], ["APP_KEY"])
    assert (await parley.agent("coder"))["env"] == ["APP_NEW"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"env": {"app_key": "x"}}, "variable name 'app_key' is not valid"),
        ({"env": {"1KEY": "x"}}, "is not valid"),
        ({"env": {"A" * 129: "x"}}, "at most 128 characters"),
        ({"env": {"PARLEY_TOKEN": "x"}}, "PARLEY_* variables are the run's own"),
        ({"env_from_server": ["PARLEY_DATABASE_URL"]}, "PARLEY_* variables are the run's own"),
        ({"env": {"PATH": "/tmp"}}, "PATH always comes from the server"),
        ({"env_from_server": ["LC_ALL"]}, "LC_ALL always comes from the server"),
        ({"env": {"TMPDIR": "/tmp"}}, "TMPDIR is each turn's own temporary folder"),
        ({"env": {"APP_KEY": "a\x00b"}}, "env.APP_KEY contains a NUL byte"),
        ({"env": {"APP_KEY": "x" * (32 * 1024 + 1)}}, "at most 32768 bytes"),
        ({"env": {"APP_KEY": "x"}, "env_from_server": ["APP_KEY"]}, "give each name once"),
        ({"env": {"APP_KEY": "x"}, "unset_env": ["APP_KEY"]}, "give each name once"),
        ({"env": {f"APP_{n}": "x" for n in range(65)}}, "at most 64 variables"),
    ],
)
async def test_bad_variables_are_refused_and_change_nothing(
    parley: Harness, body: dict[str, Any], message: str
) -> None:
    await parley.hire("coder", env={"APP_KEEP": "kept"})
    # A good variable beside the bad one: all or nothing.
    refused = await _patch(parley, "coder", **{"env": {"APP_FINE": "ok"}, **body})
    assert refused.status_code == 400, refused.text
    assert message in refused.json()["message"]
    assert (await parley.agent("coder"))["env"] == ["APP_KEEP"]


async def test_a_patch_without_a_change_is_refused(parley: Harness) -> None:
    await parley.hire("coder")
    refused = await _patch(parley, "coder")
    assert refused.status_code == 400
    assert refused.json()["message"] == "nothing to change for agent coder"


async def test_hiring_with_bad_variables_hires_nobody(parley: Harness) -> None:
    refused = await parley.owner.post(
        "/api/v1/agents", json={"name": "coder", "node": "local", "env": {"HOME": "/"}}
    )
    assert refused.status_code == 400
    assert (await parley.owner.get("/api/v1/agents/coder")).status_code == 404


async def test_only_owners_change_agents_and_retired_ones_change_no_more(parley: Harness) -> None:
    await parley.hire("coder")
    member = parley.client(await parley.add_person("ada"))
    async with member:
        refused = await member.patch("/api/v1/agents/coder", json={"env": {"APP_KEY": "x"}})
    assert refused.status_code == 403
    assert (await _patch(parley, "nobody", env={"APP_KEY": "x"})).status_code == 404
    await parley.owner.post("/api/v1/agents/coder/retire", json={"force": True})
    assert (await _patch(parley, "coder", env={"APP_KEY": "x"})).status_code == 409


async def test_a_clone_has_its_templates_variables(parley: Harness) -> None:
    await parley.hire(
        "drafter",
        template=True,
        clone_lifetime="1h",
        env={"APP_KEY": SECRET},
        env_from_server=["APP_REGION"],
    )
    cloned = await parley.owner.post("/api/v1/agents/drafter/clones", json={})
    assert cloned.status_code == 201, cloned.text
    assert (cloned.json()["env"], cloned.json()["env_from_server"]) == (
        ["APP_KEY"],
        ["APP_REGION"],
    )


async def test_the_brain_gets_its_values_and_the_server_s_at_each_turn(
    parley: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await parley.hire(
        "coder",
        brain=_env_brain(tmp_path),
        env={"APP_KEY": SECRET},
        env_from_server=["APP_REGION"],
    )
    monkeypatch.setenv("APP_REGION", "eu-west")
    monkeypatch.setenv("APP_UNDECLARED", "not for brains")
    end = await say_and_wait(parley, "coder", "hello")
    assert end["state"] == "finished", end
    assert json.loads(end["output"]) == {"APP_KEY": SECRET, "APP_REGION": "eu-west"}

    monkeypatch.setenv("APP_REGION", "us-east")  # taken at each turn, never stored
    end = await say_and_wait(parley, "coder", "again")
    assert json.loads(end["output"])["APP_REGION"] == "us-east"

    monkeypatch.delenv("APP_REGION")
    end = await say_and_wait(parley, "coder", "and now?")
    assert end["state"] == "failed"
    assert (
        "coder takes APP_REGION from the server's environment, where it is not set"
        in (end["reason"])
    )
