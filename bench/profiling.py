"""What this process spends: its CPU time, and a profile of a stretch of it."""

from __future__ import annotations

import contextlib
import cProfile
import pstats
import resource
from pathlib import Path
from typing import Any


def cpu() -> float:
    """This process's CPU time so far, all threads, in seconds."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextlib.contextmanager
def profiling(path: Path | None, profiler: str) -> Any:
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if profiler == "cprofile":
        profile = cProfile.Profile()
        profile.enable()
        try:
            yield
        finally:
            profile.disable()
            profile.dump_stats(str(path.with_suffix(".prof")))
            with path.with_suffix(".cprofile.txt").open("w") as out:
                stats = pstats.Stats(profile, stream=out)
                stats.sort_stats("tottime").print_stats(60)
                stats.sort_stats("cumulative").print_stats(80)
        return
    from pyinstrument import Profiler

    sampler = Profiler(interval=0.0005, async_mode="disabled")
    sampler.start()
    try:
        yield
    finally:
        sampler.stop()
        path.with_suffix(".txt").write_text(
            sampler.output_text(unicode=True, show_all=False, short_mode=False)
        )
        path.with_suffix(".html").write_text(sampler.output_html())
