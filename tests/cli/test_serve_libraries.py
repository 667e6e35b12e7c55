"""What `parley serve` loads to start: Alembic only when the store has migrating to do (a first
start); never httpx's command-line tool (rich and pygments), which httpx imports with itself
whenever those are installed; a2a-sdk's client only once an A2A agent is called. Checked by what
the server's own interpreter holds once it answers, not by a clock (the closing notes give the
times)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.served import _wait_until_healthy, free_port

# `python -m parley serve`, which says on its way out (it leaves by os._exit) what it had loaded.
SERVE_AND_LIST = """
import json, os, runpy, sys
leave = os._exit

def saying_what_was_loaded(code):
    print("LOADED " + json.dumps(sorted(sys.modules)), flush=True)
    leave(code)

os._exit = saying_what_was_loaded
sys.argv = ["parley", "serve", "--port", sys.argv[1]]
runpy.run_module("parley", run_name="__main__", alter_sys=True)
"""
HTTPX_TOOL = ("rich", "pygments")  # click stays: uvicorn imports it too


def _loaded_by_serving(workdir: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_AND_LIST, str(port)],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _wait_until_healthy(f"http://127.0.0.1:{port}", process=process)
    finally:
        process.send_signal(signal.SIGINT)
        said, _ = process.communicate(timeout=30)
    lines = [line for line in said.splitlines() if line.startswith("LOADED ")]
    assert lines, said
    loaded = json.loads(lines[-1].removeprefix("LOADED "))
    return set(loaded) | {name.split(".")[0] for name in loaded}


def test_a_start_on_a_current_store_loads_neither_alembic_nor_httpx_s_tool(
    tmp_path: Path,
) -> None:
    first = _loaded_by_serving(tmp_path)
    assert {"parley", "sqlalchemy", "uvicorn", "httpx"} <= first  # it did serve
    assert "alembic" in first  # the first start made the store
    again = _loaded_by_serving(tmp_path)
    assert "alembic" not in again
    assert again.isdisjoint(HTTPX_TOOL), sorted(again & set(HTTPX_TOOL))
    assert "a2a.client" not in again and "a2a.client" not in first
