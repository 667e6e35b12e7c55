"""Cursors are opaque but checked: what a list gave comes back as the key it stood for; anything
else is a clear Invalid (HTTP 400), never a server error."""

from __future__ import annotations

import base64
import json

import pytest

from parley.errors import Invalid
from parley.reads import cursors
from parley.reads.model import Slice, Window


def test_a_cursor_brings_back_the_key_of_its_list() -> None:
    for listing, key in ((cursors.RUNS, 41), (cursors.PEOPLE, "ada-smith")):
        cursor = cursors.encode(listing, key)
        assert cursor.isascii() and "=" not in cursor
        assert cursors.window(listing, 7, cursor) == Window(7, key)


def test_a_page_has_a_cursor_only_when_there_is_more() -> None:
    assert cursors.page(cursors.RUNS, Slice([1, 2], None)).next is None
    more = cursors.page(cursors.RUNS, Slice([3, 2], 2)).next
    assert more is not None and cursors.window(cursors.RUNS, None, more).after == 2


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor",
        "%%%",
        "é",
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
        base64.urlsafe_b64encode(b"[1, 2, 3]").decode(),
        base64.urlsafe_b64encode(json.dumps(["runs", True]).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps(["runs", "7"]).encode()).decode(),
        base64.urlsafe_b64encode(json.dumps({"runs": 7}).encode()).decode(),
        cursors.encode(cursors.TASKS, 7),  # another list's
        base64.urlsafe_b64encode(b"[" * 5000).decode(),  # nested past the parser's depth
    ],
)
def test_anything_else_is_refused_clearly(cursor: str) -> None:
    with pytest.raises(Invalid) as refused:
        cursors.window(cursors.RUNS, None, cursor)
    assert "is not a cursor of the runs list" in refused.value.message
    assert refused.value.fields == {"field": "before"}


@pytest.mark.parametrize("limit", [0, -1, 501])
def test_a_limit_is_one_to_five_hundred(limit: int) -> None:
    with pytest.raises(Invalid, match="limit must be between 1 and 500"):
        cursors.window(cursors.RUNS, limit, None)
    assert cursors.window(cursors.RUNS, None, None) == Window(50, None)
    assert cursors.window(cursors.RUNS, 500, None).limit == 500
