"""One A2A call answered from Parley's store: who calls (a client), which agent (an exposed
one), and each method's work — a text queued in its context (a task of its own, or one that
continues an open task it names), a task found (another client's is not found alike), read,
listed, cancelled (Parley's stop) and followed as it goes; its push configs are
``push_configs.py``'s."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import ExitStack, aclosing, asynccontextmanager
from dataclasses import dataclass
from datetime import UTC

from a2a.server.events.event_queue import Event
from a2a.types.a2a_pb2 import (
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from parley.a2a.answers import answer
from parley.a2a.contexts import send, sent_key
from parley.a2a.model import A2AClient, Exposed, TaskFilter
from parley.a2a.params import (
    check_context_of,
    history_length,
    page_offset,
    push_id_of,
    task_number,
    text_of,
)
from parley.a2a.push_configs import PushConfigs
from parley.a2a.tasks import (
    RUN_STATES_OF,
    TERMINAL,
    Now,
    as_task,
    now_of,
    task_id,
)
from parley.a2a.updates import final, going_on, working, written
from parley.a2a.words import a2a_transaction, in_a2a_words
from parley.context import Context
from parley.conversations.lifetime import stop_root
from parley.errors import Conflict
from parley.hub.following import Following, following_read
from parley.runs.model import Run
from parley.store import Tx
from parley.store.a2a_tasks import TaskRow, TaskText
from parley.store.violations import SENT_BEFORE

DEFAULT_PAGE = 50
MAX_PAGE = 100


class Call:
    """One A2A call: Parley's context, the client calling, the exposed agent it calls."""

    def __init__(self, ctx: Context, client: A2AClient, agent: Exposed) -> None:
        self.ctx, self.client, self.agent = ctx, client, agent
        self.push_configs = PushConfigs(ctx, client, self.find)
        # The task as events ended (its end, or its wait for input)
        self.ended: Now | None = None
        self._asked: Now | None = None  # the task asking, as a run's events ended
        # While ``sending``: where a new task's run is followed from, and that follow.
        self._early: ExitStack | None = None
        self._first: Following[Followed] | None = None

    @asynccontextmanager
    async def sending(self, params: SendMessageRequest) -> AsyncIterator[TaskRow]:
        """``sent``, a new task's run followed from inside the transaction that queues its
        text: nothing of the run can happen before its text commits, so ``events`` starts from
        what that transaction knows, without a read of its own."""
        with ExitStack() as early:
            self._early = early
            try:
                yield await self.sent(params)
            finally:
                self._early = self._first = None

    async def sent(self, params: SendMessageRequest) -> TaskRow:
        """The client's text queued; with a push config in the request, that config set (its
        URL checked first: a refused one queues nothing)."""
        push = params.configuration.task_push_notification_config
        asks_push = params.configuration.HasField("task_push_notification_config")
        if asks_push:
            await self.push_configs.check(push)
        task = await self._queued(params)
        if asks_push:  # checked above, for the task just found or made
            push.task_id = task_id(task)
            # Named after the message: sent again, it is set again, not added a second time.
            push.id = push.id or push_id_of(params.message.message_id)
            await self.push_configs.keep(task, push)
        return task

    async def _queued(self, params: SendMessageRequest) -> TaskRow:
        """The task the message is: a new one, or the earlier one its ``taskId`` names."""
        message = params.message
        text = text_of(message)
        with in_a2a_words():
            sent_as = sent_key(self.client, self.agent, message.message_id)
            try:
                return await self._queued_as(message, text, sent_as)
            except Conflict as conflict:
                if conflict.fields.get("reason") != SENT_BEFORE:
                    raise
        assert sent_as is not None  # only a text kept under it can have been sent before
        return await self._sent_before(message, text, sent_as)

    async def _queued_as(self, message: Message, text: str, sent_as: str | None) -> TaskRow:
        if not message.task_id:
            async with self.ctx.store.transaction() as tx:
                context = message.context_id or None
                done = await send(
                    tx, self.ctx.clock, self.client, self.agent, context, text, sent_as
                )
                if self._early is not None:
                    self._first = await self._followed_from_here(
                        tx, self._early, done.task, sent_as
                    )
            return done.task
        earlier = await self.find(message.task_id)
        check_context_of(message, earlier)
        async with self.ctx.store.transaction() as tx:
            await self._continued(tx, earlier, text, sent_as)
        return earlier

    async def _sent_before(self, message: Message, text: str, sent_as: str) -> TaskRow:
        """The task a message sent before made (or continued), as the first send answered:
        the client that sends one again, not knowing whether it arrived (its connection cut,
        Parley restarted), gets that task, and the agent does not do the work twice. The
        same messageId for another text, context or task is refused: it is another message."""
        async with a2a_transaction(self.ctx.store) as tx:
            before = await tx.a2a.sent_as(sent_as)
            assert before is not None  # texts are never deleted
            task = await self._found(tx, str(before.task_message_id))
        said = f"messageId {message.message_id!r} was sent before"
        if before.body != text:
            raise InvalidParamsError(message=f"{said} with other text: give each message its own")
        if message.task_id and message.task_id != task_id(task):
            raise InvalidParamsError(message=f"{said} for task {task_id(task)}")
        check_context_of(message, task)
        return task

    async def _continued(self, tx: Tx, task: TaskRow, text: str, sent_as: str | None) -> None:
        """``text`` for an open task: its answer, if its turn asks (kept under ``sent_as``);
        else a text that continues it, queued as any text in its context and linked to it. One
        kept under ``sent_as`` already (an answer sent again) is a Conflict, ``SENT_BEFORE``.
        Read under its context's lock, which a turn's end and a stop take first too: a task
        seen open here has not ended before the text joins it (on SQLite, the write
        transaction holds the store alone)."""
        await tx.topics.lock_root_of(task.topic_id)
        if sent_as is not None and await tx.a2a.answer_sent_as(sent_as) is not None:
            # An answer sent again finds its question decided: it is no new text for the task.
            raise Conflict(f"{sent_as} was sent before", reason=SENT_BEFORE)
        now = await now_of(tx, task)
        if now.asking is not None:
            decided = await answer(tx, self.ctx.clock, self.client, now.asking, text)
            if sent_as is not None:
                at = self.ctx.clock.now()
                await tx.a2a.keep_answer(sent_as, decided.id, task.message_id, text, at)
            return
        if now.state in TERMINAL:
            raise UnsupportedOperationError(
                message=f"task {task_id(task)} is over: send without a taskId (the same"
                " contextId goes on with the conversation)"
            )
        clock, client, agent = self.ctx.clock, self.client, self.agent
        sent = await send(tx, clock, client, agent, task.context, text, sent_as)
        await tx.a2a.link_text(sent.task.message_id, task.message_id)

    async def find(self, given: str) -> TaskRow:
        """The client's task ``given``; another client's, or none, is not found alike."""
        async with a2a_transaction(self.ctx.store) as tx:
            return await self._found(tx, given)

    async def _found(self, tx: Tx, given: str) -> TaskRow:
        message_id = task_number(given)
        found = (
            None
            if message_id is None
            else await tx.a2a.task_of_client(self.client.id, self.agent.agent_id, message_id)
        )
        if found is None:
            raise TaskNotFoundError(message=f"no task {given!r} of yours with {self.agent.name}")
        return found

    async def read(self, given: str, history_length: int | None = None) -> Task:
        """The client's task ``given`` as it stands now, found and read in one transaction."""
        async with a2a_transaction(self.ctx.store) as tx:
            return as_task(await now_of(tx, await self._found(tx, given)), history_length)

    async def task(self, task: TaskRow, history_length: int | None = None) -> Task:
        """A task found before, as it stands now: its texts and their runs read again (what
        else the row holds never changes)."""
        return as_task(await self._now(task), history_length)

    async def listed(self, params: ListTasksRequest) -> ListTasksResponse:
        """A page of the client's tasks with the agent, last updated first, filtered as asked."""
        size = params.page_size if params.HasField("page_size") else DEFAULT_PAGE
        if not 1 <= size <= MAX_PAGE:
            raise InvalidParamsError(message=f"pageSize: 1 to {MAX_PAGE}, not {size}")
        offset = page_offset(params.page_token)
        run_states, asking = (
            RUN_STATES_OF.get(params.status, ((), None)) if params.status else (None, None)
        )
        given = TaskFilter(
            context=params.context_id or None,
            run_states=run_states,
            asking=asking,
            updated_after=(
                params.status_timestamp_after.ToDatetime(tzinfo=UTC)
                if params.HasField("status_timestamp_after")
                else None
            ),
        )
        length = history_length(params)
        async with a2a_transaction(self.ctx.store) as tx:
            rows = await tx.a2a.tasks_of_client(
                self.client.id, self.agent.agent_id, given, offset, size + 1
            )
            total = await tx.a2a.count_tasks_of_client(self.client.id, self.agent.agent_id, given)
            page = rows[:size]
            tasks = [await _as_task_in(tx, row, length) for row in page]
        next_token = str(offset + size) if len(rows) > size else ""
        return ListTasksResponse(
            tasks=tasks, next_page_token=next_token, page_size=size, total_size=total
        )

    async def cancel(self, task: TaskRow) -> Task:
        """Parley's stop of the context's turn and everything under it (its subtasks, its agent
        conversations, the text waiting behind it: a task's every open run)."""
        state = (await self._now(task)).state
        if state in TERMINAL:
            raise TaskNotCancelableError(
                message=f"task {task_id(task)} is over ({TaskState.Name(state)}): nothing to cancel"
            )
        async with a2a_transaction(self.ctx.store) as tx:
            topic = await tx.topics.by_id(task.topic_id)
            assert topic is not None
            await stop_root(
                tx, self.ctx.clock.now(), topic, f"cancelled by A2A client {self.client.name}"
            )
        return await self.task(task)

    async def events(
        self, task: TaskRow, first: bool = False, over_is_error: bool = False
    ) -> AsyncIterator[Event]:
        """The task as it goes: itself first (``first``), then its reply's text as it is
        written, each tool call as a WORKING status, and its end or its wait for input (then in
        ``ended``), where a stream or a blocking send ends, as a2a-sdk's do. When a run of it
        ends and it goes on in another (a text that continues it, or its text moved on when its
        turn was interrupted), a WORKING status says so and that run is followed."""
        run_id, later = task.run_id, False  # later: past the first run followed
        while run_id is not None:
            async with self._following(task, run_id) as follow:
                now = follow.seen.now
                if not later:
                    if over_is_error and now.state in TERMINAL:
                        raise UnsupportedOperationError(
                            message=f"task {task_id(task)} is over: read it with GetTask"
                        )
                    if first:
                        yield as_task(now)
                elif now.asking is not None:  # its next run asks already
                    yield final(now)
                if now.asking is None:
                    async with aclosing(self._run_events(task, follow)) as events:
                        async for event in events:
                            yield event
                    now = self._asked or now
            if now.asking is not None:
                self.ended = now
                return
            after = follow.seen.now  # read once the run had ended
            if after.run is not None and after.run.id != run_id and after.state not in TERMINAL:
                yield going_on(task)
                run_id, later = after.run.id, True
                continue
            self.ended = after
            yield final(after)
            return

    async def _run_events(
        self, task: TaskRow, follow: Following[Followed]
    ) -> AsyncGenerator[Event]:
        """One run's events as the task's, until it ends or asks (then ``_asked``, its end
        yielded)."""
        self._asked = None
        async with aclosing(follow.events()) as events:
            async for event in events:
                if event.kind == "chunk":
                    yield written(task, follow.run, event.text)
                    continue
                if event.kind == "approval":  # replayed from the start: read whether it asks
                    now = await self._now(task)
                    if now.asking is not None:
                        self._asked = now
                        yield final(now)
                        return
                # a tool call, an approval decided, the turn started
                yield working(task, event.kind, event.text)

    @asynccontextmanager
    async def _following(self, task: TaskRow, run_id: int) -> AsyncIterator[Following[Followed]]:
        """Run ``run_id`` of ``task`` followed, the task read with it each time (the first
        time by ``sending``, if it follows this run already)."""
        first, self._first = self._first, None
        if first is not None and first.run.id == run_id:
            yield first
            return
        with in_a2a_words():
            async with following_read(
                self.ctx.store,
                self.ctx.runtime.watch,
                run_id,
                _reader(task, run_id),
                _followed_run,
            ) as follow:
                yield follow

    async def _followed_from_here(
        self, tx: Tx, early: ExitStack, task: TaskRow, sent_as: str | None
    ) -> Following[Followed] | None:
        """The new ``task``'s run followed from inside the transaction queueing its text: its
        watch subscribed to before the commit, the task as this transaction made it (one text,
        on a run that waits: nothing asks yet)."""
        if task.run_id is None:
            return None
        queue = early.enter_context(self.ctx.runtime.watch.watching(task.run_id))
        run = await tx.runs.by_id(task.run_id)
        assert run is not None
        text = TaskText(task.message_id, task.body, task.run_id, sent_as)
        seen = Followed(Now(task, (text,), (run,)), run)
        read = _reader(task, task.run_id)
        return Following(self.ctx.store, queue, read, _followed_run, seen)

    async def _now(self, task: TaskRow) -> Now:
        async with a2a_transaction(self.ctx.store) as tx:
            return await now_of(tx, task)


@dataclass(frozen=True)
class Followed:
    """A task as read while one of its runs is followed: the task, and that run."""

    now: Now
    run: Run


def _followed_run(followed: Followed) -> Run:
    return followed.run


def _reader(task: TaskRow, run_id: int) -> Callable[[Tx], Awaitable[Followed]]:
    """What a follow of ``task``'s run ``run_id`` reads: the task, and that run."""

    async def read(tx: Tx) -> Followed:
        now = await now_of(tx, task)
        run = next((run for run in now.runs if run.id == run_id), None)
        if run is None:  # its text moved on to another run: the task no longer has it
            run = await tx.runs.by_id(run_id)
            assert run is not None  # runs are never deleted
        return Followed(now, run)

    return read


async def _as_task_in(tx: Tx, task: TaskRow, history_length: int | None) -> Task:
    return as_task(await now_of(tx, task), history_length)
