"""Frames to an A2A agent, as the sender posts a batch to a peer installation: each text is a
message of the thread's A2A context (its ``contextId`` the thread's id, its ``messageId`` the
frame's), sent without waiting for the task's end. A2A has no idempotency key: each text is kept
before it is sent, and one sent before (a batch cut off after the agent took it) is looked for
among the context's tasks by its message id and taken as that task, not sent twice (an agent
that cannot list its tasks gets it again). The task it starts is then followed
(``a2a_tasks.py``), and its reply comes back into the thread. A text for a role the agent's
card does not have is refused as a peer refuses one, and so is one the agent answers with an
A2A error. A thread's tasks are cancelled when its work is stopped here (``stop_topics``), a
close's case too."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from a2a.helpers import get_message_text, new_text_part
from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)

from parley.clock import Clock
from parley.conversations.agent_conversations import Refusal
from parley.federation.a2a_agents import A2AAgents, A2ARefused, card_of, roles_of
from parley.federation.a2a_replies import Intake, give_reply
from parley.federation.frames import FrameVerdict, Verdict
from parley.federation.model import Outbound, OutboundText, PeerEndpoint, RemoteTask
from parley.store import Store

# How a text sent before is looked for there: the context's tasks, a page at a time, with as
# much of each one's history.
LISTED, PAGES = 100, 10


class A2APeer:
    def __init__(
        self, store: Store, clock: Clock, agents: A2AAgents, intake: Intake, timeout: timedelta
    ) -> None:
        """``timeout``: how long a task of an agent may take before it is cancelled and its
        sender told; ``intake``: what its replies are applied with."""
        self._store, self._clock, self._agents = store, clock, agents
        self._intake, self._timeout = intake, timeout

    async def send(self, peer: PeerEndpoint, frames: Sequence[Outbound]) -> list[FrameVerdict]:
        """One verdict per frame, in frame order; ``Unavailable`` when the agent cannot be
        reached (the batch goes again later)."""
        return [await self._one(peer, frame) for frame in frames]

    async def _one(self, peer: PeerEndpoint, frame: Outbound) -> FrameVerdict:
        if not isinstance(frame, OutboundText):
            # A close: the deleting that wrote it stopped the thread's topics, which marked its
            # tasks there to cancel (``stop_topics``); a report of dropped text tells an agent
            # nothing. Either is done with.
            return FrameVerdict(thread_id=frame.thread_id, verdict=Verdict.ACCEPTED)
        skills = roles_of(card_of(peer.card or "{}"))
        if frame.to_role not in skills:
            known = ", ".join(sorted(skills)) or "none"
            return _refused(
                frame, Refusal.UNKNOWN_ROLE, f"no skill {frame.to_role} (its roles: {known})"
            )
        async with self._store.transaction() as tx:
            answering = await tx.remote_tasks.waiting_for_us(peer.connection_id, frame.topic_id)
            earlier = await tx.remote_tasks.sending(peer.connection_id, frame, self._clock.now())
        if earlier is not None:
            if earlier.remote_task_id is not None:  # taken, and followed since
                return FrameVerdict(message_id=frame.message_id, verdict=Verdict.ACCEPTED)
            found = await self._found_there(peer, frame)
            if found is not None:
                return await self._taken(peer, frame, *found, answer=None)
        request = _request(frame, skills[frame.to_role], answering)
        try:
            async with self._agents.calling(peer) as client:
                answers = [answer async for answer in client.send_message(request)]
        except A2ARefused as exc:
            return _refused(frame, Refusal.INVALID, exc.message)
        answer = answers[-1] if answers else None
        task_id, state = _started(answer)
        if task_id is None:
            return _refused(frame, Refusal.INVALID, f"{peer.name} answered with no task")
        return await self._taken(peer, frame, task_id, state, answer)

    async def _found_there(self, peer: PeerEndpoint, frame: OutboundText) -> tuple[str, str] | None:
        """The task (and its state) the agent made of ``frame`` when an earlier attempt sent
        it: looked for among the tasks of the thread's context, by the text's message id.
        None: not there, or the agent does not list its tasks (the text is sent again)."""
        request = ListTasksRequest(
            context_id=frame.thread_id, page_size=LISTED, history_length=LISTED
        )
        try:
            async with self._agents.calling(peer) as client:
                for _ in range(PAGES):
                    page = await client.list_tasks(request)
                    for task in page.tasks:
                        if any(m.message_id == frame.message_id for m in task.history):
                            return task.id, _state_name(task.status.state)
                    if not page.next_page_token:
                        return None
                    request.page_token = page.next_page_token
        except A2ARefused:
            return None
        return None

    async def _taken(
        self, peer: PeerEndpoint, frame: OutboundText, task_id: str, state: str, answer: object
    ) -> FrameVerdict:
        now = self._clock.now()
        deadline = now + self._timeout
        async with self._store.transaction() as tx:
            row = await tx.remote_tasks.started(
                peer.connection_id, frame, task_id, state, now, deadline
            )
            tx.effects.remote_tasks = True
        said = answered_at_once(answer)
        if said is not None:
            task = RemoteTask(
                row, peer, frame.topic_id, task_id, frame, state, False, 0, now, deadline
            )
            await give_reply(self._store, self._clock, self._intake, task, said)
            async with self._store.transaction() as tx:
                await tx.remote_tasks.settled(row, state, 1, self._clock.now())
        return FrameVerdict(message_id=frame.message_id, verdict=Verdict.ACCEPTED)


def answered_at_once(answer: object) -> str | None:
    """The text of an agent's answer that is a message (no task to follow)."""
    message = getattr(answer, "message", None)
    if message is None or not message.message_id:
        return None
    return get_message_text(message)


def _request(frame: OutboundText, skill: str, answering: str | None) -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=frame.message_id,
        context_id=frame.thread_id,
        task_id=answering or "",
        parts=[new_text_part(frame.body)],
    )
    message.metadata.update({"from": frame.from_role, **({"skill": skill} if skill else {})})
    return SendMessageRequest(
        message=message, configuration=SendMessageConfiguration(return_immediately=True)
    )


def _started(answer: object) -> tuple[str | None, str]:
    """The task the agent made of the text, and its state. An agent that answers with a
    message alone (no task) answered at once: its reply is followed as a task done."""
    task = getattr(answer, "task", None)
    if task is not None and task.id:
        return task.id, _state_name(task.status.state)
    message = getattr(answer, "message", None)
    if message is not None and message.message_id:
        return f"message:{message.message_id}", "MESSAGE"
    return None, ""


def _state_name(state: int) -> str:
    return str(TaskState.Name(state))


def _refused(frame: OutboundText, reason: Refusal, detail: str) -> FrameVerdict:
    return FrameVerdict(
        message_id=frame.message_id, verdict=Verdict.REJECTED, reason=reason.value, detail=detail
    )
