"""The process group of each running command brain, recorded in the node's private folder.

A brain's launcher ends everything it started when the node dies (its parent-death signal);
these records are for what that cannot cover — the launcher itself killed with the node, say.
At its next start, before any run is recovered, the node kills what its previous life left, so
that a re-run never runs beside the turn it replaces:

- the recorded group, if it is still that one: a record names the group (its leader's pid),
  the leader's start time and the boot. Linux never gives a pid to a new process while it names
  a live process group, so a group whose leader is gone but whose members live is still ours;
- and any process carrying the run's token in its environment (``PARLEY_RUN_TOKEN``; the
  record keeps its hash): descendants that left the group keep it, unless they dropped it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
from pathlib import Path

log = logging.getLogger(__name__)

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def record(folder: Path | None, run_id: int, pgid: int, run_token: str) -> Path | None:
    """Note a running turn's group in ``folder``; None (nothing noted) without a folder, or if
    the leader is already gone."""
    started = _start_time(pgid) if folder is not None else None
    if folder is None or started is None:
        return None
    path = folder / f"run-{run_id}-{pgid}.json"
    noted = {"pgid": pgid, "started": started, "boot": _boot(), "token": _hash(run_token)}
    path.write_text(json.dumps(noted))
    return path


def forget(path: Path | None) -> None:
    if path is not None:
        path.unlink(missing_ok=True)


def end_leftovers(folder: Path) -> int:
    """Kill what a previous life of this node left running: how many groups and strays."""
    ended, tokens = 0, set()
    for path in sorted(folder.glob("run-*.json")):
        try:
            noted = json.loads(path.read_text())
            if noted["boot"] == _boot():  # else a reboot ended them all
                tokens.add(noted["token"])
                if _still_ours(noted) and _kill_group(int(noted["pgid"])):
                    ended += 1
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignored the brain process record %s: %s", path, exc)
        path.unlink(missing_ok=True)
    ended += _kill_carrying(tokens) if tokens else 0
    if ended:
        log.info("ended %d brain process group(s) and stray(s) left by the last life", ended)
    return ended


def _still_ours(noted: dict[str, object]) -> bool:
    started = _start_time(int(str(noted["pgid"])))
    return started is None or started == noted["started"]


def _kill_carrying(tokens: set[str]) -> int:
    """Kill the processes whose environment holds one of these run tokens (by hash)."""
    killed = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or another user's
        for variable in environment:
            name, _, value = variable.partition(b"=")
            if name == b"PARLEY_RUN_TOKEN" and _hash(value.decode(errors="replace")) in tokens:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    killed += 1
    return killed


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _kill_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def _start_time(pid: int) -> int | None:
    """Clock ticks after boot at which ``pid`` started; None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22, counted after the name


def _boot() -> str:
    with contextlib.suppress(OSError):
        return _BOOT_ID.read_text().strip()
    return ""
