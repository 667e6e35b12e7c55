"""What `parley serve` loads to start: Alembic only when the store has migrating to do (a first
start); never httpx's command-line tool (rich and pygments), which httpx imports with itself
whenever those are installed; a2a-sdk's client only once an A2A agent is called. Checked by what
the server's own interpreter holds once it answers, not by a clock (the closing notes give the
times)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.ports import free_port
from tests.cli.test_serve import serving

# `python -m parley serve`, which writes on its way out (it leaves by os._exit) what it had
# loaded into the file it is given.
SERVE_AND_LIST = """
import json, os, runpy, sys
leave = os._exit
port, listed = sys.argv[1], sys.argv[2]

def saying_what_was_loaded(code):
    with open(listed, "w") as out:
        json.dump(sorted(sys.modules), out)
    leave(code)

os._exit = saying_what_was_loaded
sys.argv = ["parley", "serve", "--port", port]
runpy.run_module("parley", run_name="__main__", alter_sys=True)
"""
HTTPX_TOOL = ("rich", "pygments")  # click stays: uvicorn imports it too


def _loaded_by_serving(workdir: Path) -> set[str]:
    port, listed = free_port(), workdir / "loaded.json"
    listed.unlink(missing_ok=True)
    with serving(workdir, port, python_args=["-c", SERVE_AND_LIST, str(port), str(listed)]):
        pass
    loaded = json.loads(listed.read_text())
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
