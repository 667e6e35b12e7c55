"""What `parley serve` writes to its log: the lines an operator reads, and not the rest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from bench.ports import free_port
from tests.cli.test_serve import serving

SECRET = "sk-the-servers-secret-key"


def _head() -> str:
    from alembic.script import ScriptDirectory

    from parley.store.migrate import alembic_config

    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _log_of(process: subprocess.Popen[str]) -> list[str]:
    return (process.stdout.read() if process.stdout else "").splitlines()


def test_a_first_start_logs_one_line_for_the_migration_and_names_the_model_endpoints(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {"PARLEY_OPENAI_API_KEY": SECRET,
           "PARLEY_ANTHROPIC_BASE_URL": "http://proxy:hunter2@127.0.0.1:9/anthropic"}  # fmt: skip
    with serving(tmp_path, port, env) as first:
        for _ in range(5):
            httpx.get(f"http://127.0.0.1:{port}/healthz")
    log = _log_of(first)
    text = "\n".join(log)
    assert [line for line in log if "migrat" in line.lower()] == [
        next(line for line in log if line.endswith(f"store migrated to {_head()} (from empty)"))
    ]
    assert "alembic" not in text
    endpoints = [line for line in log if "model endpoints:" in line]
    assert len(endpoints) == 1
    assert endpoints[0].endswith(
        "model endpoints: openai https://api.openai.com/v1 (key set),"
        " anthropic http://proxy:***@127.0.0.1:9/anthropic (no key)"
    )
    assert SECRET not in text and "hunter2" not in text
    assert "GET /healthz" not in text  # no access log unless asked
    assert "Started server process" not in text  # uvicorn's twin of Parley's own start line
    assert len(log) <= 8, log

    with serving(tmp_path, port) as second:
        httpx.get(f"http://127.0.0.1:{port}/healthz")
    assert not [line for line in _log_of(second) if "migrat" in line.lower()]


def test_the_access_log_is_there_when_asked(tmp_path: Path) -> None:
    port = free_port()
    with serving(tmp_path, port, {"PARLEY_ACCESS_LOG": "true"}) as process:
        httpx.get(f"http://127.0.0.1:{port}/healthz")
    assert any('"GET /healthz HTTP/1.1" 200' in line for line in _log_of(process))


def test_serve_offers_the_access_log_switch() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "parley", "serve", "--help"],
        capture_output=True, text=True, timeout=60, env={"COLUMNS": "200", "PATH": ""},
    )  # fmt: skip
    assert "--access-log" in done.stdout
