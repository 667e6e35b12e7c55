"""Waiting on a topic, for ``parley task create --wait`` and ``parley say``: a task done,
failed or cancelled, or any topic closed; and the refusals told in a root (text an agent sent
from it that did not reach its recipient, ``conversations/refusals.py``). In memory only: the
waiter reads the store once subscribed, so an ending committed before it came is not missed;
a refusal is told to those waiting when it commits."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from parley.store.effects import Effects


class TopicWatch:
    def __init__(self) -> None:
        self._waiting: dict[int, set[asyncio.Event]] = defaultdict(set)
        self._refusals: dict[int, list[Callable[[str], None]]] = defaultdict(list)

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

    @contextmanager
    def refusals(self, root_id: int, told: Callable[[str], None]) -> Iterator[None]:
        """``told`` is given each refusal's notice in the root ``root_id`` as it commits."""
        self._refusals[root_id].append(told)
        try:
            yield
        finally:
            self._refusals[root_id].remove(told)
            if not self._refusals[root_id]:
                del self._refusals[root_id]

    async def on_commit(self, effects: Effects) -> None:
        for topic_id in effects.ended_topics:
            for ended in self._waiting.get(topic_id, ()):
                ended.set()
        for root_id, notice in effects.refused:
            for told in self._refusals.get(root_id, ()):
                told(notice)
