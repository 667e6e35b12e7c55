"""The last ``KEPT`` bytes of what a turn wrote on one of its streams: what a brain's process
wrote on stderr, and what the turn had said of its reply so far. Both are kept on the run
whatever the turn's ending (finished, failed, stopped, its process killed), so that whoever may
read the run can see what the agent said and why it behaved as it did."""

from __future__ import annotations

from parley.text import without_nul

KEPT = 64 * 1024
_CONTINUATION = range(0x80, 0xC0)  # a UTF-8 byte that only continues a character


class Tail:
    """Filled as the turn writes, read by the node when the turn ends. A tail that was cut says
    so at its start, naming ``what`` it holds ("stderr", "its output")."""

    def __init__(self, what: str, cap: int = KEPT) -> None:
        self._what = what
        self._cap = cap
        self._kept = bytearray()
        self._dropped = 0

    def add(self, data: bytes) -> None:
        self._kept += data
        excess = len(self._kept) - self._cap
        if excess > 0:
            del self._kept[:excess]
            self._dropped += excess

    def text(self) -> str | None:
        """The tail as text (NUL bytes dropped: no store keeps them); None if it holds nothing
        but blanks."""
        kept = bytes(self._kept)
        dropped = self._dropped
        if dropped:
            # Cut mid-character: start at the next whole one.
            whole = next((i for i, byte in enumerate(kept) if byte not in _CONTINUATION), 0)
            kept, dropped = kept[whole:], dropped + whole
        text = without_nul(kept.decode(errors="replace")).rstrip()
        if not text.strip():
            return None
        if dropped:
            note = f"[only the last {self._cap // 1024} KiB of {self._what} are kept"
            return f"{note}: {dropped} bytes before them were dropped]\n{text}"
        return text


def stderr_tail() -> Tail:
    return Tail("stderr")
