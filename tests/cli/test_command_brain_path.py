"""A command brain calls `parley` by its bare name: the server puts its own `parley` first on the
brain's PATH, even when the server's PATH does not have it."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.cli.test_runtime_commands import ok, ok_json
from tests.served import Served

# Its reply: which `parley` it ran, and what that printed.
ASKS = """
import json, shutil, subprocess
done = subprocess.run(["parley", "act", "input", "--json"], capture_output=True, text=True)
print(json.dumps({"parley": shutil.which("parley"), "input": json.loads(done.stdout)}))
"""


def test_parley_act_input_by_bare_name_without_the_venv_on_path(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv_bin = Path(sys.executable).parent
    elsewhere = [part for part in os.environ["PATH"].split(os.pathsep) if Path(part) != venv_bin]
    monkeypatch.setenv("PATH", os.pathsep.join(elsewhere))  # the server's, read at each turn
    found = shutil.which("parley")
    assert found is None or Path(found).parent != venv_bin
    program = tmp_path / "asks.py"
    program.write_text(ASKS)
    brain = f"command:{sys.executable} {program}"
    ok_json(served, "agent", "hire", "asker", "--node", "local", "--brain", brain)
    answer = json.loads(ok(served, "say", "asker", "what is my input?"))
    assert Path(answer["parley"]) == venv_bin / "parley"
    given = answer["input"]
    assert (given["agent"], given["topic_kind"]) == ("asker", "conversation")
    assert [(m["author"], m["text"]) for m in given["said"]] == [("owner", "what is my input?")]
    conversation = ok_json(served, "conversation", "show", "asker")["topic"]["id"]
    assert given["topic_id"] == conversation
