"""A path's spelling: what the tools refuse before opening anything, and that every path they
accept stays within the workspace."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.errors import Forbidden, Invalid, ParleyError
from parley.tools.paths import MAX_PATH_BYTES, checked
from tests.tools.support import Place

REFUSED = [
    ("../secret.txt", Forbidden, "'..'"),
    ("a/../../sibling/secret.txt", Forbidden, "'..'"),
    ("a/..", Forbidden, "'..'"),
    ("/etc/passwd", Forbidden, "absolute"),
    ("//etc/passwd", Forbidden, "absolute"),
    ("", Invalid, "empty"),
    ("a\0b", Invalid, "NUL"),
    ("a" * (MAX_PATH_BYTES + 1), Invalid, "longer than 4096 bytes"),
    ("é" * (MAX_PATH_BYTES // 2 + 1), Invalid, "longer than 4096 bytes"),
    ("\ud800", Invalid, "not valid text"),
]


@pytest.mark.parametrize(("path", "error", "reason"), REFUSED)
def test_a_path_out_of_rule_is_refused_with_its_reason(
    path: str, error: type[ParleyError], reason: str
) -> None:
    with pytest.raises(error, match=reason):
        checked(path)


def test_only_list_and_find_may_name_the_workspace_itself() -> None:
    for path in (".", "./", "./."):
        with pytest.raises(Invalid, match="workspace itself"):
            checked(path)
        assert checked(path, workspace_ok=True) == "."
    assert checked("./a//b/./c") == "a/b/c"


@pytest.mark.parametrize("path", [p for p, _, _ in REFUSED])
async def test_every_tool_refuses_them(place: Place, path: str) -> None:
    tools = place.tools()
    calls = [
        tools.read(path),
        tools.write(path, "x"),
        tools.edit(path, "a", "b"),
        tools.list(path),
        tools.find("secret", path),
    ]
    for call in calls:
        with pytest.raises((Invalid, Forbidden)):
            await call
    assert sorted(os.listdir(place.workspace)) == []


STEPS = st.sampled_from(["a", "b", ".", "..", "", "/", "\0", "é", " ", "~", "\\"])


@given(st.lists(STEPS, max_size=12).map("".join))
def test_every_accepted_path_lies_within_the_workspace(path: str) -> None:
    root = "/workspace"
    try:
        accepted = checked(path, workspace_ok=True)
    except (Invalid, Forbidden):
        return
    joined = os.path.normpath(os.path.join(root, accepted))
    assert os.path.commonpath([joined, root]) == root
    assert "\0" not in accepted and ".." not in accepted.split("/")
