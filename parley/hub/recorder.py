"""Recording how turns ended, as nodes report them: a batch of ends (what the broker stored
meanwhile) in one transaction (group commit). Recording is idempotent: the end of a run that
already ended, or of an earlier start of it, changes nothing (``outcomes``).

No run stays ``running`` because its outcome could not be stored. A turn whose deferred actions
are refused is recorded as failed, with none of its actions, without failing the others of its
batch. A batch that fails for any other reason is recorded one outcome at a time, and an outcome
that cannot be recorded fails its turn with the reason, in a transaction of its own. A store
that is unreachable fails no turn: the same work is tried again, with a growing pause."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from parley.clock import Clock
from parley.conversations.model import HopBudget
from parley.conversations.refusals import Told, tell_refusal
from parley.errors import ParleyError
from parley.hub.end_checks import admitted, readable_run_ids
from parley.hub.outcomes import (
    ActionsRefused,
    Outcome,
    record_bare_failure,
    record_loaded_outcome,
)
from parley.hub.plain_replies import BudgetTight, Loaded, record_plain, take_plain
from parley.retrying import retrying
from parley.store import Store, Tx

log = logging.getLogger(__name__)

# Pauses between tries while the store is unreachable: doubling from the first to the longest.
RETRY_FIRST_SECONDS = 0.05
RETRY_LONGEST_SECONDS = 5.0
# A failed run's reason when the store refuses even the words of what went wrong.
UNRECORDED = "the hub could not record how this turn ended (the hub's log says why)"


class OutcomeRecorder:
    def __init__(self, store: Store, clock: Clock, budget: HopBudget) -> None:
        self._store, self._clock, self._budget = store, clock, budget

    async def record(self, batch: list[Outcome]) -> set[int]:
        """Record a batch in one transaction; if that cannot be, each outcome alone, and one
        that cannot be recorded alone fails its turn, saying why. An end reported through the
        broker is checked against its run there (``end_checks``) and dropped if it fails; the
        runs of those taken are returned. A batch's replies in local agent conversations take
        a few statements whatever their number (``plain_replies``): one transaction a batch
        beat parts of it recorded side by side on PostgreSQL (bench/runtime.py: about 1,000
        against 800 hops/s at 64 pairs)."""
        taken: set[int] = set()
        try:
            await self._retrying(lambda: self._refusing(batch, taken))
            return taken
        except Exception as exc:
            if len(batch) == 1:
                log.exception("run %s: its outcome cannot be recorded", batch[0].run_id)
                why = f"the hub could not record how this turn ended: {_why(exc)}"
                return await self._fail(batch[0], why)
            log.exception("recording %d outcomes together failed; one by one", len(batch))
        for outcome in batch:
            taken |= await self.record([outcome])
        return taken

    async def _fail(self, outcome: Outcome, reason: str) -> set[int]:
        """Fail the turn with ``reason`` in a transaction of its own. If even that cannot be,
        end the run alone (no notice, then no words of the error either), so that its session
        is not left waiting on it; but only an end its checks take."""
        taken: set[int] = set()
        for attempt in (
            lambda: self._record([outcome.failed(reason)], {}, taken),
            lambda: self._bare(outcome, reason, taken),
            lambda: self._bare(outcome, UNRECORDED, taken),
        ):
            try:
                await self._retrying(attempt)
                return taken
            except Exception:
                log.exception("run %s: recording its failure failed", outcome.run_id)
        log.error("run %s stays running: the store takes nothing of it", outcome.run_id)
        return taken

    async def _retrying(self, record: Callable[[], Awaitable[None]]) -> None:
        """``record``, tried again while the store is unreachable: an outage fails no turn."""
        await retrying(
            record,
            what="recording outcomes",
            first=RETRY_FIRST_SECONDS,
            longest=RETRY_LONGEST_SECONDS,
            logger=log,
        )

    async def _refusing(self, batch: list[Outcome], taken: set[int]) -> None:
        """Record a batch; a turn whose deferred actions were refused rolls the batch back and
        is recorded, on the next try, as failed without any of its actions."""
        refused: dict[int, str] = {}
        told: list[Told] = []
        plain = True
        while True:
            try:
                await self._record(batch, refused, taken, told, plain)
                return
            except BudgetTight:
                plain = False  # one by one, so that the hop past the budget is the one refused
            except ActionsRefused as exc:
                if exc.run_id in refused:
                    raise
                refused[exc.run_id] = exc.message
                if exc.refusal is not None:
                    told.append(exc.refusal)

    async def _record(
        self,
        batch: list[Outcome],
        refused: dict[int, str],
        taken: set[int],
        told: Sequence[Told] = (),
        plain: bool = True,
    ) -> None:
        """Record ``batch``, the ``refused`` turns as failed, and once committed add the runs
        of the ends taken to ``taken``; tell the roots of the refusals ``told``. Its ``plain``
        replies together (``plain_replies``), unless told not to."""
        async with self._store.transaction() as tx:
            ends = await self._load(tx, batch, refused)
            recorded = {outcome.run_id for outcome, _, _ in ends}
            if plain:
                replies, ends = await take_plain(tx, ends)
                await record_plain(tx, self._clock, self._budget, replies)
            # A second copy of an end in one batch finds its run ended by the first: nothing.
            for outcome, run, topic in ends:
                await record_loaded_outcome(tx, self._clock, outcome, run, topic, self._budget)
            for refusal in told:
                await tell_refusal(tx, self._clock.now(), refusal)
        taken |= recorded

    async def _load(self, tx: Tx, batch: list[Outcome], refused: dict[int, str]) -> list[Loaded]:
        """Each end its checks take (``end_checks``) with its run and topic, the ``refused`` ones
        made failures. The roots of the batch's turns are locked first, in one order, as a
        stop locks them (conversations/lifetime.py): read under those locks, a turn stopped
        meanwhile shows stopped, and none of its actions apply."""
        run_ids = readable_run_ids(batch)
        await tx.topics.lock_roots_of_runs(run_ids)
        runs = await tx.runs.by_ids(run_ids)
        topics = await tx.topics.by_ids({run.topic_id for run in runs.values()})
        ends: list[Loaded] = []
        for outcome in batch:
            run = runs.get(outcome.run_id)
            if not admitted(outcome, run):
                continue
            if outcome.run_id in refused:
                outcome = outcome.failed(refused[outcome.run_id])
            ends.append((outcome, run, topics.get(run.topic_id) if run else None))
        return ends

    async def _bare(self, outcome: Outcome, reason: str, taken: set[int]) -> None:
        async with self._store.transaction() as tx:
            runs = await tx.runs.by_ids(readable_run_ids([outcome]))
            if not admitted(outcome, runs.get(outcome.run_id)):
                return
            await record_bare_failure(tx, self._clock, outcome.run_id, reason)
        taken.add(outcome.run_id)


def _why(error: BaseException) -> str:
    """An exception in a few words for a run's reason: ours say it plainly; for any other, the
    innermost cause says the most (the database's own words, not the SQL around them)."""
    if isinstance(error, ParleyError):
        return error.message
    while error.__cause__ is not None:
        error = error.__cause__
    said = str(error).strip().splitlines()
    words = f"{type(error).__name__}: {said[0]}" if said else type(error).__name__
    return words if len(words) <= 300 else words[:299] + "…"
