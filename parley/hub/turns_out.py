"""The turns the scheduler sent off together, until their ends come back: the hub's consumer of
turn ends, given one end of such a group, waits a moment for the rest (``GATHER_SECONDS``), so
that the group is recorded in one transaction, as it is when its turns run in the hub's own
process. Recorded one group member at a time, every member pays a transaction's fixed
statements and round trips: a mesh whose nodes answer a batch a few ms apart each (through
NATS) paid for two or three transactions where one process paid for one, and once its groups
had split they stayed split (bench/mesh.py: about 20 ms a hop at 4 pairs against 12-13 with
the groups kept whole, and a third less CPU per hop).

Only quick turns are waited for: a group sent off within ``QUICK_SECONDS`` (rule brains, short
commands). Turns that take longer end seconds apart whatever the broker, and waiting for a
groupmate would only delay them. A lone turn has no group and never waits; a group member that
never ends (stopped without a word, lost with its node) is forgotten after ``FORGET_SECONDS``."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

# How long the consumer of ends waits for the rest of a group: under load a node may answer a
# few ms after another (4 ms let the groups split again, bench/mesh.py).
GATHER_SECONDS = 0.010
QUICK_SECONDS = 0.1
FORGET_SECONDS = 10.0


@dataclass(eq=False)
class _Group:
    sent_at: float
    out: set[int] = field(default_factory=set)  # members whose end has not come back


class TurnsOut:
    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._groups: dict[int, _Group] = {}  # run id -> its group, oldest sent first

    def __len__(self) -> int:
        return len(self._groups)

    def sent(self, run_ids: Collection[int]) -> None:
        """``run_ids`` were sent off together."""
        self._forget_old()
        self.ended(run_ids)  # a run sent again (requeued) leaves its old group
        if len(run_ids) < 2:
            return
        group = _Group(self._now(), set(run_ids))
        for run_id in run_ids:
            self._groups[run_id] = group

    def ended(self, run_ids: Iterable[int]) -> None:
        """The ends of ``run_ids`` came back (or they will never be sent)."""
        for run_id in run_ids:
            group = self._groups.pop(run_id, None)
            if group is not None:
                group.out.discard(run_id)

    def more_due(self, run_ids: Collection[int]) -> bool:
        """Whether a member of a quick group of ``run_ids`` is still out, beside ``run_ids``."""
        at_hand = set(run_ids)
        quick_since = self._now() - QUICK_SECONDS
        groups = {id(g): g for r in at_hand if (g := self._groups.get(r)) is not None}
        return any(
            group.sent_at > quick_since and not group.out <= at_hand for group in groups.values()
        )

    def _forget_old(self) -> None:
        horizon = self._now() - FORGET_SECONDS
        while self._groups:
            run_id, group = next(iter(self._groups.items()))
            if group.sent_at > horizon:
                return
            self.ended([run_id])
