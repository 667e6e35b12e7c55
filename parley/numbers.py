"""Whole numbers read from outside (a URL, a form, a channel's reference): ASCII digits only,
and bounded before they are converted. ``str.isdigit`` is true of superscript and full-width
digits, which ``int`` then refuses or reads as numbers, and ``int`` of thousands of digits is
refused: neither may reach a caller as anything but a clear error."""

from __future__ import annotations

from parley.errors import Invalid

MAX_ID = 2**31 - 1  # ids are 32-bit integers on PostgreSQL


def ascii_number(text: str, high: int = MAX_ID) -> int | None:
    """``text`` as a number from 0 to ``high`` if it is one written in ASCII digits, else None."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(high)):
        return None
    number = int(text)
    return number if number <= high else None


def whole_number(text: str, field: str, low: int, high: int) -> int:
    """``text`` as a number from ``low`` to ``high`` (0 or more); Invalid naming ``field``."""
    number = ascii_number(text.strip(), high)
    if number is None or number < low:
        raise Invalid(f"{field} must be a whole number from {low} to {high}", field=field)
    return number
