"""Which turns' ends the hub takes from the broker: only from the node the turn was sent to, for
the start it was sent, with proof that node held it. An end is taken if

- it came on ``run_outcomes_subject(node)`` where ``node`` is the run's node: the broker lets a
  node publish on its own subject alone (its credentials' permissions), so the subject names
  the node that sent it;
- it names the start it answers (``started_as``, the hash of that start's run token), and that
  start is the run's current one: a run its node did not take in time started again with
  another token, and the late end of the earlier start must not end the later one;
- it carries the run token, whose hash is the run's: only the node the turn was sent to was
  given it, so it proves that node held this start (another node, or anyone who could publish
  on the node's subject without having had the turn, cannot end it).

The checks run in the recorder's transaction, on the runs as it reads them to record the ends
(after the locks it takes): one read of a batch's runs, and no start between check and record.
Anything else is dropped with a WARNING naming the subject and the run it claims, and changes
nothing; the batch it came in is acknowledged all the same (a forged end must not hold up the
genuine ones behind it). An end that passes for a run that has already ended changes nothing
more than it did before (``outcomes``: what a stopped turn wrote is kept, nothing else).

A person's answer to a human agent's turn (``human.py``) does not come through the broker and
is not checked here."""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from parley.broker.port import Delivered
from parley.hub.outcomes import Outcome
from parley.node.messages import RUN_OUTCOMES_OF_NO_NODE, RunEvent, node_of, run_outcomes_subject
from parley.runs.model import RUN_IDS, Run
from parley.tokens import hash_token

log = logging.getLogger(__name__)


def claimed(message: Delivered) -> Outcome | None:
    """The end ``message`` claims to be, to be checked against its run (``refusal``); None if
    it claims none (malformed past naming its run, or a chunk). An end that cannot be read
    still ends its turn, failed, saying why — if it shows what any end must."""
    try:
        event = RunEvent.model_validate_json(message.data)
    except ValidationError as exc:
        return _unreadable(message, exc)
    if not event.is_end:
        log.warning("ignored a chunk of run %s sent as an end on %s", event.run_id, message.subject)
        return None
    return Outcome.of(event, message.subject)


def readable_run_ids(batch: Sequence[Outcome]) -> list[int]:
    """The runs ``batch`` names that the store may hold: a run id past what it holds names no
    run (and would fail the read, and the batch with it, again and again)."""
    return sorted({outcome.run_id for outcome in batch if outcome.run_id in RUN_IDS})


def admitted(outcome: Outcome, run: Run | None) -> bool:
    """Whether ``outcome`` may end ``run`` (the run it names, as the store has it now); if not,
    it is dropped, saying why. An outcome reported in-process has nothing to prove."""
    if outcome.subject is None:
        return True
    refused = refusal(outcome, run)
    if refused is not None:
        log.warning(
            "dropped an end on %s claiming run %s: %s", outcome.subject, outcome.run_id, refused
        )
    return refused is None


def refusal(claim: Outcome, run: Run | None) -> str | None:
    """Why ``claim``, reported on its subject, is not an end of ``run`` (the run it names, as
    the store has it); None if it is."""
    if run is None:
        return "no such run"
    node = node_of(claim.subject or "", run_outcomes_subject)
    if node != run.node_name:
        return f"wrong node: the run is on node {run.node_name!r}, not {node!r}"
    if claim.started_as is None:
        return "no start: it names no start of the run it answers"
    if run.token_hash is None or not _same(claim.started_as, run.token_hash):
        return "stale start: it answers another start of the run than the current one"
    if claim.run_token is None or not _hashes_to(claim.run_token, run.token_hash):
        return "bad token: it does not carry the run's token"
    return None


def drop_ends_of_no_node(batch: Sequence[Delivered]) -> None:
    """What was stored on the subject every node shared (before each had one of its own, or by
    a node of an earlier version) names no node: no end of it can be taken. Dropped, saying so;
    its turn, if no node holds it, is failed as interrupted and its text waits again."""
    for message in batch:
        log.warning(
            "dropped an end on %s claiming run %s: it names no node (sent before the hub's"
            " upgrade, or by a node of an earlier version: upgrade the node)",
            RUN_OUTCOMES_OF_NO_NODE,
            run_of(message.data, ("finished", "failed", "stopped")),
        )


def run_of(data: bytes, kinds: tuple[str, ...] | None = None) -> int | None:
    """The run an event is about, if it can be read (and is of one of ``kinds``, if given);
    nothing more is checked here."""
    fields = _fields(data)
    if fields is None or (kinds is not None and fields.get("kind") not in kinds):
        return None
    run_id = fields.get("run_id")
    return run_id if isinstance(run_id, int) and not isinstance(run_id, bool) else None


def validation_errors(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in e['loc']) or 'event'}: "
        + e["msg"].removeprefix("Value error, ")
        for e in error.errors()
    )


def _unreadable(message: Delivered, error: ValidationError) -> Outcome | None:
    run_id = run_of(message.data, ("finished", "failed"))
    if run_id is None:
        why = validation_errors(error)
        log.warning("ignored a malformed turn's end on %s: %s", message.subject, why)
        return None
    fields = _fields(message.data) or {}
    started_as, run_token = _text(fields.get("started_as")), _text(fields.get("run_token"))
    why = (
        "its node reported this turn's end in a form the hub cannot take:"
        f" {validation_errors(error)}"
    )
    return Outcome(
        run_id, False, why, run_token=run_token, started_as=started_as, subject=message.subject
    )


def _fields(data: bytes) -> dict[str, Any] | None:
    try:
        fields = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    return fields if isinstance(fields, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _same(given: str, expected: str) -> bool:
    """In constant time; any text compares (``compare_digest`` takes ASCII text only)."""
    return hmac.compare_digest(_utf8(given), _utf8(expected))


def _hashes_to(token: str, token_hash: str) -> bool:
    try:
        digest = hash_token(token)
    except UnicodeEncodeError:  # a lone surrogate: no token of ours (they are ASCII)
        return False
    return _same(digest, token_hash)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")
