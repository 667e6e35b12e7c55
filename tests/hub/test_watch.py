"""Following a run: a watcher who comes while it is going gets the reply so far, then the rest."""

from __future__ import annotations

from parley.hub.watch import RunWatch


async def test_a_late_watcher_gets_the_pieces_so_far_then_the_rest_and_the_end() -> None:
    watch = RunWatch()
    watch.chunk(7, "Hello")
    with watch.watching(7) as queue:
        watch.chunk(7, ", world")
        watch.end(7, "finished")
        seen = [queue.get_nowait() for _ in range(queue.qsize())]
    assert [(e.kind, e.text) for e in seen] == [
        ("chunk", "Hello"),
        ("chunk", ", world"),
        ("end", "finished"),
    ]
    with watch.watching(7) as again:  # once ended, nothing is kept in memory
        assert again.empty()
