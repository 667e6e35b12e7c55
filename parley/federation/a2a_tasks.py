"""Following the tasks of A2A agents that our roles' texts started, until each ends: polled
(GetTask) while any is open, woken when one starts or is to be cancelled. A task done gives its
reply (its artifacts' text, else its last message) to the thread; one that asks for more
(input required) gives its question, and stays followed (the role's next text in the thread
answers it); one that fails, is rejected, cancelled there or outlives its deadline tells the
role that sent the text why, in its conversation and at its root, as a refused text is told;
one whose work was stopped here is cancelled there (CancelTask). The store holds what is
followed, so a restart picks it up where it was."""

from __future__ import annotations

import asyncio
import logging
from functools import partial

from a2a.helpers import get_artifact_text, get_message_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    Role,
    SubscribeToTaskRequest,
    Task,
    TaskState,
)

from parley.clock import Clock
from parley.conversations.refusals import tell_root
from parley.errors import ParleyError
from parley.federation.a2a_agents import A2AAgents, A2ARefused, card_of
from parley.federation.a2a_replies import Intake, give_reply
from parley.federation.failures import notify_failed
from parley.federation.frames import Verdict
from parley.federation.model import RemoteTask
from parley.reasons import with_code
from parley.store import Store
from parley.worker import Worker

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
MAX_REASON = 2000
ENDED = {
    TaskState.TASK_STATE_FAILED: "failed",
    TaskState.TASK_STATE_REJECTED: "rejected",
    TaskState.TASK_STATE_CANCELED: "cancelled",
    TaskState.TASK_STATE_AUTH_REQUIRED: "asked for an authentication Parley cannot give",
}


class RemoteTasks(Worker):
    def __init__(self, store: Store, clock: Clock, agents: A2AAgents, intake: Intake) -> None:
        super().__init__("a2a-tasks", logger=log)
        self._store, self._clock, self._agents, self._intake = store, clock, agents, intake
        # By remote task row: the stream (SubscribeToTask) of an agent whose card says it
        # streams; each event it brings wakes a pass, so an answer is taken up at once.
        self._streams: dict[int, asyncio.Task[None]] = {}

    async def stop(self) -> None:
        await super().stop()
        for stream in self._streams.values():
            stream.cancel()
        await asyncio.gather(*self._streams.values(), return_exceptions=True)
        self._streams.clear()

    async def on_commit(self, effects: object) -> None:
        if getattr(effects, "remote_tasks", False):
            self.wake()

    async def one_pass(self) -> float | None:
        async with self._store.transaction() as tx:
            following = await tx.remote_tasks.open()
        for task in following:
            try:
                await self._follow(task)
            except ParleyError as exc:  # that agent away: the others go on, it is asked again
                log.info("A2A task %s of %s: %s", task.remote_task_id, task.peer.name, exc)
        self._subscribe([task for task in following if _streams(task)])
        return POLL_SECONDS if following else None

    def _subscribe(self, tasks: list[RemoteTask]) -> None:
        """A stream for each task of a streaming agent that has none (one that ends or fails
        leaves the task to the polls)."""
        for task in tasks:
            if task.id not in self._streams and task.state.startswith("TASK_STATE_"):
                stream = asyncio.create_task(self._stream(task), name=f"a2a-stream-{task.id}")
                self._streams[task.id] = stream
                stream.add_done_callback(partial(self._ended, task.id))

    def _ended(self, row: int, _: asyncio.Task[None]) -> None:
        self._streams.pop(row, None)

    async def _stream(self, task: RemoteTask) -> None:
        try:
            async with self._agents.calling(task.peer, streaming=True) as client:
                request = SubscribeToTaskRequest(id=task.remote_task_id)
                async for _ in client.subscribe(request):
                    self.wake()
        except (ParleyError, NotImplementedError) as exc:  # the polls follow it all the same
            log.info("A2A task %s of %s: no stream (%s)", task.remote_task_id, task.peer.name, exc)
        self.wake()

    async def _follow(self, task: RemoteTask) -> None:
        if task.state == "MESSAGE":  # answered at once; its reply was given (a restart cut in)
            await self._settle(task, task.state, task.replies)
            return
        if task.cancel_asked:
            await self._cancel(task)
            await self._settle(task, "TASK_STATE_CANCELED", task.replies)
            return
        if self._clock.now() >= task.deadline:
            await self._cancel(task)
            waited = int((task.deadline - task.created_at).total_seconds())
            reason = with_code("timeout", f"{task.peer.name} did not finish within {waited} s")
            await self._failed(task, reason)
            return
        try:
            async with self._agents.calling(task.peer) as client:
                now = await client.get_task(GetTaskRequest(id=task.remote_task_id))
        except A2ARefused as exc:
            await self._failed(task, with_code("invalid", exc.message))
            return
        await self._moved(task, now)

    async def _moved(self, task: RemoteTask, now: Task) -> None:
        state = now.status.state
        name = TaskState.Name(state)
        if state == TaskState.TASK_STATE_COMPLETED:
            await self._reply(task, _answer(now))
            await self._settle(task, name, task.replies + 1)
        elif state == TaskState.TASK_STATE_INPUT_REQUIRED:
            if task.state != name:  # asked once: the question goes to the thread once
                await self._reply(task, _question(now))
                async with self._store.transaction() as tx:
                    await tx.remote_tasks.moved(task.id, name, task.replies + 1)
        elif state in ENDED:
            said = _status_text(now)
            reason = f"{task.peer.name}'s task {ENDED[state]}" + (f": {said}" if said else "")
            await self._failed(task, with_code(ENDED[state].split()[0], reason))
        elif task.state != name:
            async with self._store.transaction() as tx:
                await tx.remote_tasks.moved(task.id, name, task.replies)

    async def _reply(self, task: RemoteTask, text: str) -> None:
        """Given to the thread; one the thread does not take (its connection paused, the thread
        closed) is told at the root, never dropped unsaid."""
        verdict = await give_reply(self._store, self._clock, self._intake, task, text)
        if verdict.final_verdict is not Verdict.REJECTED:
            return
        frame = task.frame
        told = (
            f"{frame.to_role}@{frame.connection}'s answer to {frame.from_role} was not taken:"
            f" {verdict.reason}: {verdict.detail}"
        )
        async with self._store.transaction() as tx:
            await tell_root(tx, self._clock.now(), frame.topic_id, frame.sender_agent_id, told)

    async def _cancel(self, task: RemoteTask) -> None:
        try:
            async with self._agents.calling(task.peer) as client:
                await client.cancel_task(CancelTaskRequest(id=task.remote_task_id))
        except A2ARefused as exc:  # over there already, or it cannot: nothing more to do
            log.info(
                "A2A task %s of %s not cancelled: %s", task.remote_task_id, task.peer.name, exc
            )

    async def _failed(self, task: RemoteTask, reason: str) -> None:
        async with self._store.transaction() as tx:
            await notify_failed(tx, self._clock.now(), task.frame, reason[:MAX_REASON])
            await tx.remote_tasks.settled(task.id, "FAILED", task.replies, self._clock.now())

    async def _settle(self, task: RemoteTask, state: str, replies: int) -> None:
        async with self._store.transaction() as tx:
            await tx.remote_tasks.settled(task.id, state, replies, self._clock.now())


def _streams(task: RemoteTask) -> bool:
    """Whether the agent's card says it streams."""
    return card_of(task.peer.card or "{}").capabilities.streaming


def _answer(task: Task) -> str:
    """What a task done answered: its artifacts' text, else its status's or last message's."""
    texts = [get_artifact_text(artifact) for artifact in task.artifacts]
    return "\n".join(text for text in texts if text) or _status_text(task) or _last_said(task)


def _question(task: Task) -> str:
    return _status_text(task) or _last_said(task) or "(the agent asks for more, saying nothing)"


def _status_text(task: Task) -> str:
    return get_message_text(task.status.message) if task.HasField("status") else ""


def _last_said(task: Task) -> str:
    said = [get_message_text(m) for m in task.history if m.role == Role.ROLE_AGENT]
    return said[-1] if said else ""
