"""Approvals from the command line, against a running server: ``parley say`` shows the call
waiting (stderr, with the command to answer) and how it was decided; ``parley turns`` lists it
with its exact arguments; ``parley deny`` and ``parley approve`` decide; ``agent hire --ask``
sets what asks first. The model is a local fake of the OpenAI API."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from parley.settings import Settings
from tests.brains.fake_openai import openai_app
from tests.brains.fakes import Reply, Script, ToolCall, serving
from tests.cli.test_runtime_commands import ok, ok_json, run, until
from tests.served import Served
from tests.served import serving as serving_parley

WRITE = ToolCall("run", {"command": "echo hi > made.txt"})


@pytest.fixture
def served_with_model(settings: Settings) -> Iterator[Served]:
    script = Script(replies=[Reply(calls=(WRITE,)), Reply(text="Done.")])
    with serving(openai_app(script)) as url:
        configured = settings.model_copy(
            update={"openai_base_url": url + "/v1", "openai_api_key": SecretStr("k")}
        )
        with serving_parley(configured) as served:
            yield served


def _say(served: Served, agent: str, text: str) -> subprocess.Popen[str]:
    env = os.environ | {"PARLEY_URL": served.url, "PARLEY_TOKEN": served.owner_token}
    return subprocess.Popen(
        [sys.executable, "-m", "parley", "say", agent, text],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_say_shows_the_call_waiting_and_deny_answers_it(
    served_with_model: Served, tmp_path: Path
) -> None:
    served = served_with_model
    hired = ok_json(served, "agent", "hire", "builder", "--node", "local", "--brain",
                    "openai:model-test", "--tools", "run,read", "--ask", "run")  # fmt: skip
    saying = _say(served, "builder", "make a file")
    listed = until(lambda: ok_json(served, "approvals")["items"])
    shown = ok(served, "turns", COLUMNS="200")
    (approval,) = listed
    number = str(approval["id"])
    denied = ok(served, "deny", number, "--reason", "not here")
    out, err = saying.communicate(timeout=60)
    again = run(served, "approve", number)
    assert hired["ask"] == ["run"] and hired["tools"] == ["read", "run"]
    assert approval["tool"] == "run" and approval["arguments"] == WRITE.args
    assert 'run({"command": "echo hi > made.txt"})' in shown and "parley approve ID" in shown
    assert denied.strip() == f"denied run ({number})"
    assert saying.returncode == 0, err
    assert out.strip() == "Done."
    assert f"[approval {number}] run(" in err and f"parley approve {number}" in err
    assert "denied by owner (not here)" in err
    assert again.exit_code != 0 and "already denied by owner" in again.output
    assert not (Path(hired["workspace"]) / "made.txt").exists()


def test_approve_lets_the_call_act(served_with_model: Served, tmp_path: Path) -> None:
    served = served_with_model
    hired = ok_json(served, "agent", "hire", "builder", "--node", "local", "--brain",
                    "openai:model-test", "--tools", "run")  # fmt: skip
    saying = _say(served, "builder", "make a file")
    (approval,) = until(lambda: ok_json(served, "approvals")["items"])
    approved = ok_json(served, "approve", str(approval["id"]))
    out, err = saying.communicate(timeout=60)
    assert out.strip() == "Done."
    assert approved["state"] == "approved" and approved["decided_by"] == "owner"
    assert saying.returncode == 0, err
    assert "approved by owner" in err
    assert (Path(hired["workspace"]) / "made.txt").read_text() == "hi\n"


def test_an_ask_list_that_names_nothing_is_refused_with_the_reason(served: Served) -> None:
    refused = run(served, "agent", "hire", "builder", "--node", "local", "--ask", "rn")
    assert refused.exit_code != 0
    assert "'rn' is neither a workspace tool" in refused.output
    assert run(served, "agent", "show", "builder").exit_code != 0  # nothing was hired
