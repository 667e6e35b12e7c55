"""Parley behind a2a-sdk's transports: each A2A method answered from the store, which holds the
truth (a task is a client's texts and the runs that have them), so that a task's state survives a
restart and a cancel is Parley's stop — the turn ends, its brain's process is killed, on this
machine or a joined node — not an SDK executor's in-memory flag."""

from __future__ import annotations

from collections.abc import AsyncGenerator

from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.request_handlers.request_handler import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
)

from parley.a2a.calls import Call
from parley.a2a.params import history_length
from parley.a2a.tasks import as_task


class ParleyHandler(RequestHandler):
    """One for the app; who calls, and which agent, come with each call's context."""

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Task | Message:
        call = _call(context)
        length = history_length(params.configuration)  # checked before anything is queued
        if params.configuration.return_immediately:
            return await call.task(await call.sent(params), length)
        async with call.sending(params) as task:
            async for _ in call.events(task):
                pass
        if call.ended is None:  # its text has no run (it never does, once queued)
            return await call.task(task, length)
        return as_task(call.ended, length)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        call = _call(context)
        async with call.sending(params) as task:
            async for event in call.events(task, first=True):
                yield event

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        return await _call(context).read(params.id, history_length(params))

    async def on_list_tasks(
        self, params: ListTasksRequest, context: ServerCallContext
    ) -> ListTasksResponse:
        return await _call(context).listed(params)

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        call = _call(context)
        return await call.cancel(await call.find(params.id))

    async def on_subscribe_to_task(
        self, params: SubscribeToTaskRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event]:
        call = _call(context)
        task = await call.find(params.id)
        async for event in call.events(task, first=True, over_is_error=True):
            yield event

    async def on_create_task_push_notification_config(
        self, params: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        return await _call(context).push_configs.set(params)

    async def on_get_task_push_notification_config(
        self, params: GetTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        call = _call(context)
        [found] = await call.push_configs.listed(params.task_id, params.id or None, one=True)
        return found

    async def on_list_task_push_notification_configs(
        self, params: ListTaskPushNotificationConfigsRequest, context: ServerCallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        found = await _call(context).push_configs.listed(params.task_id, None)
        return ListTaskPushNotificationConfigsResponse(configs=found)

    async def on_delete_task_push_notification_config(
        self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext
    ) -> None:
        await _call(context).push_configs.delete(params.task_id, params.id)

    async def on_get_extended_agent_card(
        self, params: GetExtendedAgentCardRequest, context: ServerCallContext
    ) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError()


def _call(context: ServerCallContext) -> Call:
    state = context.state
    return Call(state["parley"], state["a2a_client"], state["a2a_agent"])
