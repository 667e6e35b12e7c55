"""Durations as operators type them: ``90s``, ``30m``, ``2h``, ``1d``, ``1h30m``."""

from __future__ import annotations

import re
from datetime import timedelta

from parley.errors import Invalid

_PART = re.compile(r"([0-9]+)([smhdw])")  # \d takes any script's digits
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION = timedelta(days=3650)
MAX_DURATION_TEXT = 64


def parse_duration(text: str, field: str = "duration") -> timedelta:
    if len(text) > MAX_DURATION_TEXT:
        raise Invalid(f"{field} is longer than {MAX_DURATION_TEXT} characters", field=field)
    cleaned = text.strip().lower().replace(" ", "")
    parts = _PART.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise Invalid(
            f"{field} {text!r} is not a duration: write e.g. 90s, 30m, 2h, 1d or 1h30m", field=field
        )
    # Compared as a number first: a huge one overflows timedelta.
    seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds <= 0:
        raise Invalid(f"{field} {text!r} must be longer than zero", field=field)
    if seconds > MAX_DURATION.total_seconds():
        raise Invalid(f"{field} {text!r} is longer than ten years", field=field)
    return timedelta(seconds=seconds)


def format_duration(seconds: int) -> str:
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
