"""What a person types into ``parley chat``, read on a thread of its own so that ``/stop`` stops
the current turn while its reply streams; every other line waits its turn."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from parley.cli.client import ApiClient
from parley.errors import ParleyError

STOP = "/stop"


class TypedLines:
    def __init__(self, stopper: ApiClient) -> None:
        self._stopper = stopper  # a client of its own: the main thread's is busy streaming
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._current: int | None = None
        threading.Thread(target=self._read, name="chat-input", daemon=True).start()

    def next(self) -> str | None:
        """The next line typed, stripped; None at the end of input."""
        return self._lines.get()

    @contextmanager
    def during(self, run_id: int) -> Iterator[None]:
        """While a reply streams: a /stop typed now stops this run."""
        with self._lock:
            self._current = run_id
        try:
            yield
        finally:
            with self._lock:
                self._current = None

    def _read(self) -> None:
        for raw in sys.stdin:
            line = raw.strip()
            if not (line == STOP and self._stopped_current()):
                self._lines.put(line)
        self._lines.put(None)

    def _stopped_current(self) -> bool:
        """Stop the run streaming now; False when none was (the /stop is then handled in turn)."""
        with self._lock:
            run_id = self._current
        if run_id is None:
            return False
        try:
            return bool(self._stopper.post(f"/runs/{run_id}/stop", {})["stopped"])
        except ParleyError:
            return False
