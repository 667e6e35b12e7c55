"""Every list and every single read of the API, for one reader, against the pure model: nothing
is shown that the rule hides (a leak), nothing hidden that it shows (over-hidden)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.reads.build import AGENTS
from tests.reads.model import AGENT_CONVERSATION, CONVERSATION, TASK, Reader, Topic, World

Params = dict[str, Any]
TASK_FILTERS: list[Params] = [
    {},
    {"deleted": "true"},
    {"status": "open"},
    {"status": "cancelled", "deleted": "true"},
]
RUN_FILTERS: list[Params] = [
    {},
    {"agent": "w0"},
    {"state": ["queued"]},
    {"state": ["finished", "stopped"], "agent": "w1"},
]
DETAIL_LISTS = ("messages", "runs", "subtasks", "agent_conversations")


class Comparison:
    def __init__(self, client: httpx.AsyncClient, world: World, reader: Reader, small: int):
        self.client, self.world, self.reader, self.small = client, world, reader, small

    async def lists(self) -> None:
        world, reader = self.world, self.reader
        for deleted in (False, True):
            flag = str(deleted).lower()
            conversations = world.conversations(reader, deleted)
            await self.list_is("/conversations", {"deleted": flag}, conversations)
            between = world.agent_conversations(reader, deleted)
            await self.list_is("/agent-conversations", {"include_closed": flag}, between)
        for params in TASK_FILTERS:
            deleted = params.get("deleted") == "true"
            tasks = world.tasks(reader, params.get("status"), deleted, None)
            await self.list_is("/tasks", params, tasks)
        for params in RUN_FILTERS:
            states = tuple(params.get("state", ()))
            await self.list_is("/runs", params, world.runs_of(reader, params.get("agent"), states))
        for role, peer in (("w0", "w1"), ("w1", "w2"), ("w2", "w0")):
            history = world.history(reader, role, peer)
            await self.list_is(f"/agents/{role}/history/{peer}", {}, history, _topic_id)
        await self.list_is("/me/turns", {}, [], lambda turn: turn["run"]["id"])

    async def shared_lists(self) -> None:
        """The lists every person reads whole (no topic in them but a node's)."""
        world = self.world
        names = sorted(r.name for r in world.readers)
        await self.list_is("/people", {}, names, lambda person: person["name"])
        await self.list_is("/agents", {}, ["node:local", *AGENTS], lambda agent: agent["name"])
        await self.list_is("/nodes", {}, ["local"], lambda node: node["name"])
        await self.list_is("/agents/w0/memory", {}, [])
        await self.list_is("/agents/w0/warnings", {}, [])
        await self.list_is("/nodes/local/exchanges", {}, [])

    async def lists_of(self, topic: Topic) -> None:
        """The lists filtered to one topic; a topic the reader may not read is absent."""
        world, reader, absent = self.world, self.reader, f"no topic {topic.id}"
        expected = world.messages_of(reader, topic.id)
        await self.list_is(f"/topics/{topic.id}/messages", {}, expected, absent=absent)
        expected = world.runs_of(reader, topic=topic.id)
        await self.list_is("/runs", {"topic": topic.id}, expected, absent=absent)
        expected = world.tasks(reader, None, True, topic.id)
        params: Params = {"parent": topic.id, "deleted": "true"}
        await self.list_is("/tasks", params, expected, absent=absent)
        expected = world.agent_conversations(reader, True, topic.id)
        params = {"root": topic.id, "include_closed": "true"}
        await self.list_is("/agent-conversations", params, expected, absent=absent)

    async def single_reads(self, topic: Topic) -> None:
        readable = self.world.may_read(self.reader, topic)
        detail = await self.read_is(f"/topics/{topic.id}", readable, f"no topic {topic.id}")
        if detail is not None:
            self.detail_is(detail, topic)
        is_task = topic.kind == TASK
        await self.read_is(f"/tasks/{topic.id}", readable and is_task, f"no task {topic.id}")
        if topic.kind == CONVERSATION:
            await self.read_is(
                f"/conversations/{topic.id}", readable, f"no conversation {topic.id}"
            )
        if topic.kind == AGENT_CONVERSATION:
            thread = topic.thread_id
            await self.read_is(
                f"/agent-conversations/{thread}", readable, f"no agent conversation {thread}"
            )

    async def own_conversations(self) -> None:
        for agent in AGENTS:
            expected = self.world.open_conversation(self.reader, agent)
            absent = f"you have no conversation with {agent}"
            shown = await self.read_is(f"/conversations/{agent}", expected is not None, absent)
            if shown is not None:
                assert shown["topic"]["id"] == expected

    async def run_read(self, run_id: int) -> None:
        run = self.world.runs[run_id]
        readable = self.world.may_read(self.reader, self.world.topics[run.topic_id])
        shown = await self.read_is(f"/runs/{run_id}", readable, f"no run {run_id}")
        if shown is not None:
            assert (shown["run"]["id"], shown["topic"]["id"]) == (run_id, run.topic_id)

    # checking

    def detail_is(self, detail: Any, topic: Topic) -> None:
        world, reader = self.world, self.reader
        assert detail["topic"]["id"] == topic.id
        expected = {
            "messages": world.messages_of(reader, topic.id),
            "runs": world.runs_of(reader, topic=topic.id),
            "subtasks": world.tasks(reader, None, True, topic.id),
            "agent_conversations": world.agent_conversations(reader, True, topic.id),
        }
        for name in DETAIL_LISTS:
            wanted = expected[name]
            assert wanted is not None
            shown = [item["id"] for item in detail[name]["items"]]
            assert shown == wanted[:50], (self.reader, topic, name)
            assert (detail[name]["next"] is None) == (len(wanted) <= 50)

    async def read_is(self, path: str, readable: bool, absent: str) -> Any:
        response = await self.client.get(f"/api/v1{path}")
        if readable:
            assert response.status_code == 200, (self.reader, path, response.text)
            return response.json()
        assert response.status_code == 404, (self.reader, path, "leaks", response.text)
        assert response.json()["message"] == absent
        return None

    async def list_is(
        self,
        path: str,
        params: Params,
        expected: list[Any] | None,
        key: Any = None,
        absent: str = "",
    ) -> None:
        """The first page of ``small`` rows, then the pages after it, against ``expected``
        (None: the list's subject is absent for this reader)."""
        key = key or _id
        if expected is None:
            response = await self.client.get(f"/api/v1{path}", params=params)
            assert response.status_code == 404, (self.reader, path, params, response.text)
            assert response.json()["message"] == absent
            return
        first = await self._page(path, {**params, "limit": self.small})
        assert [key(item) for item in first["items"]] == expected[: self.small], (
            self.reader,
            path,
            params,
        )
        assert (first["next"] is None) == (len(expected) <= self.small)
        found = [key(item) for item in first["items"]]
        before = first["next"]
        while before is not None:
            page = await self._page(path, {**params, "limit": 100, "before": before})
            found += [key(item) for item in page["items"]]
            before = page["next"]
        assert found == expected, (self.reader, path, params)

    async def _page(self, path: str, params: Params) -> Any:
        response = await self.client.get(f"/api/v1{path}", params=params)
        assert response.status_code == 200, (self.reader, path, params, response.text)
        page = response.json()
        assert set(page) == {"items", "next"}
        return page


def _id(item: Any) -> Any:
    return item["id"]


def _topic_id(detail: Any) -> Any:
    return detail["topic"]["id"]
