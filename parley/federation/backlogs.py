"""How much text each connection may have waiting here for our agents, at most: the receiver
counts a connection's backlog (text sent to us that no run has taken up yet) only when a batch
could bring it past the connection's limit. Counting it for every batch read every waiting
text, up to the limit, each time: with a limit of thousands and an agent that takes its text
slower than it comes, that count was a seventh of what the receiving side spent.

The bound is the last count plus every text accepted since. Runs taking text up only lower
the real backlog, so the bound is never below it (as far as one process sees: two batches
applied at once may each count before the other's text is committed, as they did before)."""

from __future__ import annotations


class Backlogs:
    def __init__(self) -> None:
        self._bound: dict[int, int] = {}  # by connection id

    def room(self, connection_id: int, limit: int, incoming: int) -> int | None:
        """Room for text under ``limit``, if ``incoming`` texts cannot bring the backlog past
        it whatever the runs took since the last count; None when it must be counted."""
        bound = self._bound.get(connection_id)
        if bound is None or bound + incoming > limit:
            return None
        return limit - bound

    def counted(self, connection_id: int, backlog: int) -> None:
        self._bound[connection_id] = backlog

    def accepted(self, connection_id: int, texts: int) -> None:
        if connection_id in self._bound:
            self._bound[connection_id] += texts
