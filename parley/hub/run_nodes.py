"""The node each running turn was sent to, for its reply chunks: a chunk is shown to whoever
watches the turn only if it came from that node (on ``run_events_subject(node)``, which only
that node may publish on). The scheduler says which turns it sent where, and which ended; a
turn sent by an earlier life of the hub (it went on on its node across a restart) is read from
the store once."""

from __future__ import annotations

from collections.abc import Iterable

from parley.runs.model import RUN_IDS, RunState
from parley.store import Store


class RunNodes:
    def __init__(self, store: Store) -> None:
        self._store = store
        self._nodes: dict[int, str] = {}  # run id -> the node its turn runs on

    def sent(self, run_id: int, node: str) -> None:
        self._nodes[run_id] = node

    def ended(self, run_ids: Iterable[int]) -> None:
        for run_id in run_ids:
            self._nodes.pop(run_id, None)

    async def runs_on(self, run_id: int, node: str) -> bool:
        """Whether ``run_id`` is a running turn of ``node``'s."""
        known = self._nodes.get(run_id)
        if known is None and run_id not in RUN_IDS:
            return False
        if known is None:
            async with self._store.transaction() as tx:
                run = await tx.runs.by_id(run_id)
            if run is None or run.state is not RunState.RUNNING:
                return False
            known = self._nodes[run_id] = run.node_name
        return known == node
