"""`parley serve` freezes out of the garbage collector's full passes what it made to start (its
store, hub, node, routes) as it froze its modules once loaded (cli/event_loop.py). Checked in the
server's own interpreter, by what existed at each of its freezes, not by a clock (the closing
notes give the times)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.ports import free_port
from tests.cli.test_serve import serving

STARTED = ("parley.hub.scheduler.Scheduler", "parley.store.store.Store")  # a started server's
# `python -m parley serve`, which writes on its way out (it leaves by os._exit) which of those
# existed at each of its freezes.
SERVE_AND_TELL = f"""
import gc, json, os, runpy, sys
leave, freeze = os._exit, gc.freeze
port, told = sys.argv[1], sys.argv[2]
freezes = []

def freezing():
    kinds = {{type(held) for held in gc.get_objects()}}
    names = {{f"{{kind.__module__}}.{{kind.__qualname__}}" for kind in kinds}}
    freezes.append(sorted(names & set({STARTED!r})))
    freeze()

def telling(code):
    with open(told, "w") as out:
        json.dump(freezes, out)
    leave(code)

gc.freeze = freezing
os._exit = telling
sys.argv = ["parley", "serve", "--port", port]
runpy.run_module("parley", run_name="__main__", alter_sys=True)
"""


def test_a_started_server_has_frozen_its_start_as_well_as_its_modules(tmp_path: Path) -> None:
    port, told = free_port(), tmp_path / "freezes.json"
    with serving(tmp_path, port, python_args=["-c", SERVE_AND_TELL, str(port), str(told)]):
        pass
    freezes = json.loads(told.read_text())
    assert freezes[0] == []  # its modules, loaded: nothing started yet
    assert sorted(STARTED) in freezes[1:], freezes
