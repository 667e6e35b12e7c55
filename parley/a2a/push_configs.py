"""A task's push configs as a client sets, reads and deletes them over A2A: each checked first
(its fields, its URL's host against the SSRF guard), kept under the client and the task, and
never read back with its secrets. Sending them is ``pushes.py``'s."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from a2a.types.a2a_pb2 import TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError

from parley.a2a.model import A2AClient, PushConfig
from parley.a2a.params import check_push_fields
from parley.a2a.pushes import check_push_url
from parley.a2a.tasks import task_id
from parley.a2a.words import a2a_transaction
from parley.context import Context
from parley.errors import Invalid
from parley.store.a2a_tasks import TaskRow


class PushConfigs:
    """The push configs of ``client``'s tasks, each found by ``find`` (another client's task
    is not found, as for every other method)."""

    def __init__(
        self, ctx: Context, client: A2AClient, find: Callable[[str], Awaitable[TaskRow]]
    ) -> None:
        self.ctx, self.client, self._find = ctx, client, find

    async def set(self, given: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
        """Checked (the URL's host, the config id), kept, and queued from the task's state now."""
        task = await self._find(given.task_id)
        await self.check(given)
        return await self.keep(task, given)

    async def keep(
        self, task: TaskRow, given: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """``given``, checked already, kept for ``task`` (the client's) and queued from the
        task's state now."""
        config_id = given.id or uuid.uuid4().hex
        auth = given.authentication
        async with a2a_transaction(self.ctx.store) as tx:
            kept = await tx.a2a.set_push(
                self.client.id,
                task.message_id,
                config_id,
                self.ctx.clock.now(),
                url=given.url,
                token=given.token or None,
                auth_scheme=auth.scheme or None,
                auth_credentials=auth.credentials or None,
            )
            tx.effects.pushes = True
        return _push_out(kept, task_id(task))

    async def check(self, given: TaskPushNotificationConfig) -> None:
        check_push_fields(given)
        try:
            await check_push_url(given.url, self.ctx.settings.push_allowed_hosts)
        except Invalid as refused:
            raise InvalidParamsError(message=refused.message) from None

    async def listed(
        self, given_task: str, config_id: str | None, one: bool = False
    ) -> list[TaskPushNotificationConfig]:
        task = await self._find(given_task)
        async with a2a_transaction(self.ctx.store) as tx:
            found = await tx.a2a.pushes(self.client.id, task.message_id, config_id)
        if one and not found:
            raise InvalidParamsError(
                message=f"task {given_task} has no push config {config_id or ''!r}".strip()
            )
        return [_push_out(push, task_id(task)) for push in found]

    async def delete(self, given_task: str, config_id: str) -> None:
        """Idempotent: deleting one that is not there changes nothing."""
        task = await self._find(given_task)
        async with a2a_transaction(self.ctx.store) as tx:
            await tx.a2a.delete_push(self.client.id, task.message_id, config_id)


def _push_out(push: PushConfig, task: str) -> TaskPushNotificationConfig:
    """A config as the client set it, its secrets never read back."""
    return TaskPushNotificationConfig(id=push.config_id, task_id=task, url=push.url)
