"""Durations as operators type them: ``90s``, ``30m``, ``2h``, ``1d``, ``1h30m``."""

from __future__ import annotations

import re
from datetime import timedelta

from parley.errors import Invalid

_PART = re.compile(r"(\d+)([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
MAX_DURATION = timedelta(days=3650)


def parse_duration(text: str, field: str = "duration") -> timedelta:
    cleaned = text.strip().lower().replace(" ", "")
    parts = _PART.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise Invalid(
            f"{field} {text!r} is not a duration: write e.g. 90s, 30m, 2h, 1d or 1h30m", field=field
        )
    duration = timedelta(seconds=sum(int(n) * _UNIT_SECONDS[u] for n, u in parts))
    if duration <= timedelta(0):
        raise Invalid(f"{field} {text!r} must be longer than zero", field=field)
    if duration > MAX_DURATION:
        raise Invalid(f"{field} {text!r} is longer than ten years", field=field)
    return duration


def format_duration(seconds: int) -> str:
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
