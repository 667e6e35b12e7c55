"""CPU time of a mesh's processes, read from /proc: what a hop costs each of them. Steadier
than latency on a shared machine, whose speed swings within a day: a change that makes a hop
cheaper shows here even when the windows' p50s are lost in the noise."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
POSTGRES = "postgres"  # every process of the PostgreSQL server, whoever it serves


def cpu_seconds(pids: Mapping[str, list[int]]) -> dict[str, float]:
    """CPU seconds (user + system) so far of each kind's processes, and of the PostgreSQL
    server's (``POSTGRES``); a process gone counts nothing."""
    used = {kind: sum(map(process_seconds, kind_pids)) for kind, kind_pids in pids.items()}
    used[POSTGRES] = sum(process_seconds(pid) for pid in _postgres_pids())
    return used


def process_seconds(pid: int) -> float:
    """CPU seconds (user + system) so far of one process; 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == POSTGRES:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids
