"""Waiting for a topic to end, for ``parley task create --wait``: a task done, failed or
cancelled, or any topic closed. In memory only: the waiter reads the store once subscribed, so
an ending committed before it came is not missed."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

from parley.store.effects import Effects


class TopicWatch:
    def __init__(self) -> None:
        self._waiting: dict[int, set[asyncio.Event]] = defaultdict(set)

    @contextmanager
    def watching(self, topic_id: int) -> Iterator[asyncio.Event]:
        """An event set when a transaction that ended or closed the topic has committed."""
        ended = asyncio.Event()
        self._waiting[topic_id].add(ended)
        try:
            yield ended
        finally:
            self._waiting[topic_id].discard(ended)
            if not self._waiting[topic_id]:
                del self._waiting[topic_id]

    async def on_commit(self, effects: Effects) -> None:
        for topic_id in effects.ended_topics:
            for ended in self._waiting.get(topic_id, ()):
                ended.set()
