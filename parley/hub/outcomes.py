"""Recording how a turn ended, as its node (or its person) reported it. Only a running run takes
an outcome: a run already stopped stays stopped, whatever arrives late.

One rule for every kind of brain (scripted, command, model, a human agent's person): a turn's
reply goes to whoever the turn answers — the person's conversation, the task's log, the run
that asked a node, or in an agent conversation the other agent (a send, which takes a hop of the
root's budget). An empty reply goes nowhere: that is how an agent ends an exchange."""

from __future__ import annotations

from dataclasses import dataclass

from parley.actions.table import ACTIONS
from parley.channels.outbound import post_reply
from parley.clock import Clock
from parley.conversations.model import HopBudget, Topic, TopicKind
from parley.conversations.refusals import Told, told
from parley.deliveries.model import NodeAnswer, node_answer_key
from parley.errors import ParleyError
from parley.hub.actions import RunActing
from parley.hub.cut_short import NOT_KEPT, keep_said_so_far
from parley.node.messages import ActionCall, RunEvent, ToolCallRecord
from parley.redact import redact
from parley.runs.model import Run, RunChange, RunState, ToolCall
from parley.store import Tx
from parley.text import without_nul
from parley.tokens import hash_token


@dataclass(frozen=True)
class Outcome:
    """How one turn ended, read once from what its node (or its person) reported."""

    run_id: int
    succeeded: bool
    # The reply when it succeeded; why it did not when it failed.
    text: str
    brain_session_id: str | None = None
    # Actions the brain deferred to its end: applied with the outcome, all or none, under the
    # authority of the run's token, which comes with them.
    actions: tuple[ActionCall, ...] = ()
    run_token: str | None = None
    # The end of what the brain's process wrote on stderr, kept on the run however it ended.
    stderr: str | None = None
    # What a stopped or failed turn had said of its reply so far, kept marked as cut short.
    said_so_far: str | None = None
    # The node ended a turn the hub had stopped: only its stderr is left to keep.
    stopped: bool = False
    # The hash of the run token the turn was started with (None: not said, as by a person).
    started_as: str | None = None
    # Every tool call the turn made, in order: kept on the run however it ended.
    tool_calls: tuple[ToolCall, ...] = ()
    # The broker subject its node reported it on: the recorder takes it only if it passes the
    # checks of ``end_checks`` against its run. None: reported in-process (by a person, not
    # through the broker), with nothing to prove.
    subject: str | None = None

    @classmethod
    def of(cls, event: RunEvent, subject: str) -> Outcome:
        """A brain's words may hold NUL bytes, which no store keeps: they are dropped here."""
        session = event.brain_session_id
        return cls(
            run_id=event.run_id,
            succeeded=event.kind == "finished",
            text=without_nul(event.text),
            brain_session_id=None if session is None else without_nul(session),
            actions=tuple(event.actions),
            run_token=event.run_token,
            stderr=None if event.stderr is None else without_nul(event.stderr),
            said_so_far=None if event.said_so_far is None else without_nul(event.said_so_far),
            stopped=event.kind == "stopped",
            started_as=event.started_as,
            subject=subject,
            tool_calls=tuple(_kept(seq, call) for seq, call in enumerate(event.tool_calls, 1)),
        )

    def failed(self, reason: str) -> Outcome:
        """This turn failed with ``reason``, and none of its actions apply; its stderr stays.
        A reply it gave is undone with them, and the reason says so: whoever watched it
        stream must not think it stands."""
        reason = without_nul(reason)
        if self.succeeded and self.text.strip():
            reason = f"{reason}; {NOT_KEPT}"
        return Outcome(
            self.run_id,
            False,
            reason,
            stderr=self.stderr,
            said_so_far=self.said_so_far,  # a turn that failed on its node: what it had said
            # Its proofs stay: recorded again alone, it is checked again.
            run_token=self.run_token,
            started_as=self.started_as,
            subject=self.subject,
            tool_calls=self.tool_calls,  # they were made, whatever becomes of their turn
        )

    def shown_stderr(self) -> str | None:
        """Its stderr as people may see it, like a reason: a command's stderr may print its
        token or a key."""
        return None if self.stderr is None else redact(self.stderr)

    def shown_said_so_far(self) -> str | None:
        """What it had said so far as people may see it, like its stderr."""
        return None if self.said_so_far is None else redact(self.said_so_far)

    def ends(self, run: Run) -> bool:
        """Whether this is the end of ``run``'s current start: not of an earlier start, which
        its node did not take in time (the run went back to waiting and started again)."""
        return self.started_as is None or self.started_as == run.token_hash


async def record_loaded_outcome(
    tx: Tx,
    clock: Clock,
    outcome: Outcome,
    run: Run | None,
    topic: Topic | None,
    budget: HopBudget | None = None,
) -> RunState | None:
    """Finish or fail the run, with the run and its topic already read (a batch reads them
    together); None if it was no longer running (stopped meanwhile): the run's state is read
    in this transaction, and none of a stopped run's actions apply. A refused action, or a
    refused reply to the other agent, raises ``ActionsRefused``. The end of an earlier start
    of the run changes nothing."""
    if run is None or topic is None or not outcome.ends(run):
        return None
    stderr, said = outcome.shown_stderr(), outcome.shown_said_so_far()
    now = clock.now()
    await keep_tool_calls(tx, clock, budget, run, topic, outcome.tool_calls)
    text = outcome.text
    # The run ends first, if it is still running: its UPDATE waits for whoever else is ending it
    # (a lost node's runs failed, a hub back from a stop failing what no node holds, an earlier
    # end of the same batch), and a run ended by them has its text queued again already: none
    # of this outcome may apply then.
    ended = False
    if run.state is not RunState.RUNNING or outcome.stopped:
        pass  # stopped meanwhile, or by its node's own stop
    elif outcome.succeeded:
        ended = await tx.runs.finish(run.id, RunState.FINISHED, now, output=text, stderr=stderr)
    else:
        # The reason is shown to people and logged: whatever a brain quoted (a provider's error,
        # a command's stderr) loses its keys and tokens here, whichever node it came from.
        reason = redact(text)
        ended = await tx.runs.finish(run.id, RunState.FAILED, now, reason=reason, stderr=stderr)
    if not ended:  # nothing applies; what it wrote is kept, as it is once a run has ended
        if stderr is not None:
            await tx.runs.keep_stderr(run.id, stderr)
        if said is not None:
            await keep_said_so_far(tx, clock, run, said)
        return None
    tx.effects.freed = True
    if not outcome.succeeded:
        if said is not None:
            await keep_said_so_far(tx, clock, run, said)
        notice = f"{run.agent_name} could not finish this turn: {reason}"
        await tx.messages.add(topic.id, "notice", notice, now, from_run_id=run.id)
        if topic.kind is TopicKind.NODE:
            await _answer_asking_run(tx, clock, run, notice)
        tx.effects.changed.append(RunChange(run, RunState.FAILED, now, reason))
        return RunState.FAILED
    if outcome.actions:
        _check_token(run, outcome.run_token)
        assert budget is not None, "deferred actions are applied within a hop budget"
        await _apply_deferred(tx, clock, budget, run, topic, outcome.actions)
    if replies_to_agent(topic, text):
        assert budget is not None, "a reply to an agent is sent within a hop budget"
        await _reply_to_agent(tx, clock, budget, run, topic, text)
    if outcome.brain_session_id is not None:
        await tx.runs.update_session(run.session_id, brain_session_id=outcome.brain_session_id)
    await _deliver_reply(tx, clock, run, topic, text)
    tx.effects.changed.append(RunChange(run, RunState.FINISHED, now))
    return RunState.FINISHED


async def keep_tool_calls(
    tx: Tx,
    clock: Clock,
    budget: HopBudget | None,
    run: Run,
    topic: Topic,
    calls: tuple[ToolCall, ...],
) -> None:
    """Keep the turn's tool calls on its run, and count each call of a workspace tool or an
    MCP server as a hop of its origin: a model looping on tools spends the budget a loop of
    agents would (the calls were made: what is over the budget stops what the origin sets off
    next). Parley's own actions are on the record too, and spend their hops as they act."""
    if not await tx.tool_calls.keep(run.id, calls) or budget is None:
        return
    hops = sum(1 for call in calls if _is_tool(call.tool))
    if hops:
        now = clock.now()
        await tx.hops.spend_many({topic.origin_id: hops}, now, now - budget.window)


def _is_tool(name: str) -> bool:
    action = ACTIONS.get(name)
    return action is None or action.in_workspace


def _kept(seq: int, call: ToolCallRecord) -> ToolCall:
    """A call as its run keeps it: what a brain's words held of NUL bytes is dropped."""
    error = None if call.error is None else without_nul(call.error)
    return ToolCall(
        seq=seq,
        tool=without_nul(call.tool),
        arguments=without_nul(call.arguments),
        result_bytes=call.result_bytes,
        duration_ms=call.duration_ms,
        error=error,
        after_chars=call.after_chars,
    )


async def record_bare_failure(tx: Tx, clock: Clock, run_id: int, reason: str) -> bool:
    """The last resort, when even a failure with its notice cannot be recorded: the run alone
    ends failed, so that its session takes text again. False if it was no longer running."""
    run = await tx.runs.by_id(run_id)
    if run is None or run.state is not RunState.RUNNING:
        return False
    reason, now = redact(without_nul(reason)), clock.now()
    await tx.runs.finish(run.id, RunState.FAILED, now, reason=reason)
    tx.effects.freed = True
    tx.effects.changed.append(RunChange(run, RunState.FAILED, now, reason))
    return True


def replies_to_agent(topic: Topic, text: str) -> bool:
    """A reply in an agent conversation is a send to the other agent: it acts, as an action
    does (under its root's lock, within its hop budget)."""
    return topic.kind is TopicKind.AGENT_CONVERSATION and bool(text.strip())


async def _reply_to_agent(
    tx: Tx, clock: Clock, budget: HopBudget, run: Run, topic: Topic, text: str
) -> None:
    other = topic.other_role(run.agent_id)
    assert other is not None, "a run in an agent conversation is one of its two roles"
    try:
        await RunActing(tx, clock, budget, run, topic).send(other, text)
    except ParleyError as exc:
        raise ActionsRefused(run.id, exc.message, told(exc)) from exc


async def _deliver_reply(tx: Tx, clock: Clock, run: Run, topic: Topic, text: str) -> None:
    if not text.strip() or topic.kind is TopicKind.AGENT_CONVERSATION:
        return  # nothing to say; or said already, to the other agent (above)
    await tx.messages.add(
        topic.id, "reply", text, clock.now(), author_agent_id=run.agent_id, from_run_id=run.id
    )
    await post_reply(tx, clock, run, topic, text)  # and where the person wrote from, if a channel
    if topic.kind is TopicKind.NODE:
        await _answer_asking_run(tx, clock, run, f"{run.agent_name} answers: {text}")


async def _answer_asking_run(tx: Tx, clock: Clock, run: Run, text: str) -> None:
    agent_id, topic_id = await tx.messages.reply_route(run.id)
    if agent_id is None or topic_id is None:
        return  # a person asked: the answer waits in the node's topic
    answer = NodeAnswer(
        agent_id=agent_id,
        topic_id=topic_id,
        text=text,
        author_agent_id=run.agent_id,
        node_topic_id=run.topic_id,
    )
    if await tx.outbox.put(node_answer_key(run.id), answer, clock.now()):
        tx.effects.outbox = True


class ActionsRefused(Exception):
    """A deferred action of ``run_id`` was refused: the transaction must be rolled back (so
    that none of that turn's actions stays) and the turn recorded as failed with ``message``."""

    def __init__(self, run_id: int, message: str, refusal: Told | None = None) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.message = message
        self.refusal = refusal  # one its root hears of (a hop budget, a send to a peer)


def _check_token(run: Run, token: str | None) -> None:
    """Deferred actions act with the run's authority, as every action does: its token."""
    if token is None or run.token_hash is None or hash_token(token) != run.token_hash:
        raise ActionsRefused(run.id, "a role token without a run has no topic: no valid run token")


async def _apply_deferred(
    tx: Tx,
    clock: Clock,
    budget: HopBudget,
    run: Run,
    topic: Topic,
    actions: tuple[ActionCall, ...],
) -> None:
    """Each action checked against the table and the run's tools before it acts."""
    acting = RunActing(tx, clock, budget, run, topic)
    try:
        for call in actions:
            await acting.act(call.name, call.arguments)
    except ParleyError as exc:
        raise ActionsRefused(run.id, exc.message, told(exc)) from exc
