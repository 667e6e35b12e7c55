"""What an account's adapter remembers while the server runs, bounded so that a long life does
not grow it for ever: the outbox keys it has posted (key → Telegram's message id) and the
threads it has made, so that an attempt repeated after a known success posts nothing again; the
reply chains messages belong to; which chats are forums."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

REMEMBERED = 10_000  # of each kind; the oldest forgotten first


class Recent(Generic[K, V]):
    def __init__(self, size: int = REMEMBERED) -> None:
        self._items: OrderedDict[K, V] = OrderedDict()
        self._size = size

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is not None:
            self._items.move_to_end(key)
        return found

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
