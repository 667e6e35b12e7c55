"""A usage error (an unknown option or command, a missing argument, a bad value) is said the
way Parley says every error: one ``error: …`` line on stderr, then the usage; exit 2. Never
rich's boxed panel, run as a user runs the command."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

BOX = "╭│╰─"


def _parley(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    env |= {"PARLEY_URL": "http://127.0.0.1:9", "PARLEY_TOKEN": "t", "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "parley", *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "said", "usage"),
    [
        (["agent", "list", "--bogus"], "no such option: --bogus", "agent list [OPTIONS]"),
        (["say"], "missing argument 'agent'", "say [OPTIONS] {agent} {text}"),
        (["agent", "lst"], "no such command 'lst'", "agent [OPTIONS] COMMAND [ARGS]..."),
        (["run", "show", "seven"], "invalid value for 'run_id'", "run show [OPTIONS]"),
        (["delivery", "list", "--state", "lost"], "invalid value for '--state'", "delivery list"),
    ],
)
def test_a_usage_error_is_an_error_line_and_the_usage(
    args: list[str], said: str, usage: str
) -> None:
    done = _parley(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    error, hint = done.stderr.splitlines()
    assert error.startswith(f"error: {said}"), error
    assert hint.startswith(f"usage: python -m parley {usage}") and hint.endswith(
        "(--help for more)"
    )
    assert not any(c in done.stderr for c in BOX)


def test_naming_a_group_alone_shows_its_help() -> None:
    done = _parley("agent")
    assert done.returncode == 2
    assert "Commands:" in done.stdout + done.stderr and "hire" in done.stdout + done.stderr
    assert not any(c in done.stdout + done.stderr for c in BOX)


def test_help_is_plain_text_at_80_columns() -> None:
    for args in (["--help"], ["agent", "hire", "--help"], ["run", "follow", "--help"]):
        done = _parley(*args)
        assert done.returncode == 0
        assert not any(c in done.stdout for c in BOX)
        assert max(len(line) for line in done.stdout.splitlines()) <= 80
