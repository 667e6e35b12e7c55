"""read, write, edit and list in a real workspace, hostile inputs included: links out of it,
binary files, FIFOs, sizes past the caps."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from parley.errors import Forbidden, Invalid, NotFound
from tests.tools.support import Place, tree


async def test_a_written_file_is_read_back_its_folders_made(place: Place) -> None:
    tools = place.tools()
    assert await tools.write("notes/today/plan.md", "é plan\n") == (
        "wrote 8 bytes to notes/today/plan.md"
    )
    assert await tools.read("notes/today/plan.md") == "é plan\n"
    assert await tools.read("./notes//today/plan.md") == "é plan\n"
    # atomic: a temporary file beside it, renamed; none left behind
    assert tree(place.workspace) == {
        "notes": "/",
        "notes/today": "/",
        "notes/today/plan.md": "é plan\n",
    }


async def test_a_rewrite_keeps_the_file_s_mode(place: Place) -> None:
    script = place.workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)
    await place.tools().write("run.sh", "echo new\n")
    assert script.read_text() == "echo new\n"
    assert script.stat().st_mode & 0o777 == 0o750


async def test_a_missing_file_is_not_found(place: Place) -> None:
    with pytest.raises(NotFound, match=r"'nothing\.txt' does not exist"):
        await place.tools().read("nothing.txt")


def links_out(place: Place) -> None:
    """Links made beforehand: to the system, to a sibling folder, to a sibling file."""
    (place.workspace / "etc").symlink_to("/etc")
    (place.workspace / "sib").symlink_to(place.sibling)
    (place.workspace / "relative").symlink_to("../sibling")
    (place.workspace / "secret.txt").symlink_to(place.sibling / "secret.txt")
    (place.workspace / "inner").mkdir()
    (place.workspace / "inner" / "up").symlink_to("../../sibling")


OUT = ["etc/passwd", "sib/secret.txt", "relative/secret.txt", "secret.txt", "inner/up/secret.txt"]


@pytest.mark.parametrize("path", OUT)
async def test_nothing_goes_through_a_link_out_of_the_workspace(place: Place, path: str) -> None:
    links_out(place)
    tools = place.tools()
    before = tree(place.sibling)
    for call in (
        tools.read(path),
        tools.write(path, "overwritten"),
        tools.edit(path, "secret", "changed"),
        tools.write(f"{path.rsplit('/', 1)[0]}/new/file.txt", "planted"),
        tools.list(path.rsplit("/", 1)[0]),
        tools.find("secret", path),
    ):
        with pytest.raises(Forbidden, match="leads out of your workspace"):
            await call
    assert tree(place.sibling) == before  # nothing changed, nothing made
    assert (place.workspace / "secret.txt").is_symlink()


async def test_a_link_a_command_made_leads_nowhere_either(place: Place) -> None:
    tools = place.tools()
    made = await tools.run(f"ln -s / out && ln -s {place.sibling} sib && echo made")
    assert made == "exit code 0\nmade"
    for path in ("out/etc/hostname", f"out{place.sibling}/secret.txt", "sib/secret.txt"):
        with pytest.raises(Forbidden):
            await tools.read(path)
        with pytest.raises(Forbidden):
            await tools.edit(path, "secret", "changed")
    with pytest.raises(Forbidden):
        await tools.write("sib/planted.txt", "x")
    with pytest.raises(Forbidden):
        await tools.list("out")
    with pytest.raises(Forbidden):
        await tools.find("root", "out/etc")
    assert sorted(os.listdir(place.sibling)) == ["secret.txt"]
    # Listing the workspace shows the links without following them.
    assert await tools.list(".") == f"out -> /\nsib -> {place.sibling}"


async def test_a_link_that_stays_inside_is_followed(place: Place) -> None:
    (place.workspace / "docs").mkdir()
    (place.workspace / "docs" / "a.txt").write_text("alpha\n")
    (place.workspace / "current").symlink_to("docs")
    (place.workspace / "docs" / "same").symlink_to("../docs/a.txt")
    tools = place.tools()
    assert await tools.read("current/a.txt") == "alpha\n"
    assert await tools.read("docs/same") == "alpha\n"
    assert await tools.list("current") == "a.txt  6 bytes\nsame -> ../docs/a.txt"
    await tools.write("docs/same", "beta\n")
    await tools.edit("current/a.txt", "beta", "gamma")
    # The target changed; the links are still links.
    assert (place.workspace / "docs" / "a.txt").read_text() == "gamma\n"
    assert (place.workspace / "docs" / "same").is_symlink()
    assert (place.workspace / "current").is_symlink()
    await tools.write("current/new.txt", "made through the link\n")
    assert (place.workspace / "docs" / "new.txt").read_text() == "made through the link\n"


async def test_a_write_past_the_cap_is_refused_before_anything_is_written(place: Place) -> None:
    tools = place.tools(max_write_bytes=1000)
    with pytest.raises(Invalid, match=r"more than a write may \(1000\); nothing was written"):
        await tools.write("big/file.txt", "a" * 1001)
    with pytest.raises(Invalid, match="more than a write may"):
        await tools.write("big.txt", "é" * 501)  # 1002 bytes in 501 characters
    assert os.listdir(place.workspace) == []
    assert await tools.write("fits.txt", "a" * 1000) == "wrote 1000 bytes to fits.txt"


async def test_a_1_gb_write_is_refused_at_once(place: Place) -> None:
    content = "a" * (1024 * 1024 * 1024)
    with pytest.raises(Invalid, match="nothing was written"):
        await place.tools().write("huge.txt", content)
    assert os.listdir(place.workspace) == []


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"\x7fELF\x02\x01\x00\x00binary", "binary file"), (b"caf\xe9 latin-1\n", "not UTF-8")],
)
async def test_a_binary_file_is_neither_read_nor_edited(
    place: Place, data: bytes, reason: str
) -> None:
    (place.workspace / "blob").write_bytes(data)
    tools = place.tools()
    with pytest.raises(Invalid, match=reason):
        await tools.read("blob")
    with pytest.raises(Invalid, match=reason):
        await tools.edit("blob", "latin", "x")
    assert (place.workspace / "blob").read_bytes() == data


async def test_a_fifo_is_refused_without_hanging(place: Place) -> None:
    os.mkfifo(place.workspace / "pipe")
    tools = place.tools()
    for call in (tools.read("pipe"), tools.edit("pipe", "a", "b"), tools.write("pipe", "x")):
        with pytest.raises(Invalid, match="not a regular file"):
            await asyncio.wait_for(call, 5)


async def test_folders_are_listed_not_read_nor_written_over(place: Place) -> None:
    (place.workspace / "src").mkdir()
    (place.workspace / "src" / "keep.txt").write_text("kept")
    tools = place.tools()
    with pytest.raises(Invalid, match="'src' is a folder"):
        await tools.read("src")
    with pytest.raises(Invalid, match="'src' is a folder"):
        await tools.write("src", "flattened")
    with pytest.raises(Invalid, match="workspace itself"):
        await tools.write(".", "flattened")
    with pytest.raises(Invalid, match="is a file, not a folder"):
        await tools.list("src/keep.txt")
    with pytest.raises(NotFound, match="a step of it is a file"):
        await tools.list("src/keep.txt/deeper")
    assert (place.workspace / "src" / "keep.txt").read_text() == "kept"


async def test_a_read_past_the_cap_is_cut_and_says_so(place: Place) -> None:
    (place.workspace / "long.txt").write_text("0123456789" * 100)
    result = await place.tools(max_read_bytes=25).read("long.txt")
    text, note = result.split("\n", 1)
    assert text == "0123456789012345678901234"
    assert "cut: this is the first 25 bytes of long.txt, which has 1000" in note
    assert "find" in note and "sed" in note


async def test_a_cut_does_not_split_a_character(place: Place) -> None:
    (place.workspace / "accents.txt").write_text("é" * 10)  # two bytes each
    result = await place.tools(max_read_bytes=5).read("accents.txt")
    assert result.startswith("éé\n[cut: this is the first 4 bytes")


async def test_an_edit_replaces_the_one_occurrence(place: Place) -> None:
    (place.workspace / "a.py").write_text("x = 1\ny = 2\n")
    (place.workspace / "a.py").chmod(0o700)
    result = await place.tools().edit("a.py", "y = 2", "y = 3")
    assert result == "edited a.py: replaced 1 occurrence; it now has 12 bytes"
    assert (place.workspace / "a.py").read_text() == "x = 1\ny = 3\n"
    assert (place.workspace / "a.py").stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize(
    ("old", "reason"), [("z = 9", "does not occur"), ("= 1", "occurs 2 times"), ("", "empty")]
)
async def test_an_edit_without_one_occurrence_changes_nothing(
    place: Place, old: str, reason: str
) -> None:
    (place.workspace / "a.py").write_text("x = 1\nw = 1\n")
    with pytest.raises(Invalid, match=reason):
        await place.tools().edit("a.py", old, "q")
    assert (place.workspace / "a.py").read_text() == "x = 1\nw = 1\n"


async def test_an_edit_whose_result_is_past_the_cap_is_refused(place: Place) -> None:
    (place.workspace / "a.txt").write_text("short")
    with pytest.raises(Invalid, match="more than a write may"):
        await place.tools(max_write_bytes=10).edit("a.txt", "short", "much much longer")
    assert (place.workspace / "a.txt").read_text() == "short"


async def test_a_listing_is_sorted_with_folders_and_sizes_and_capped(place: Place) -> None:
    for name in ("b.txt", "a.txt", "c.txt"):
        (place.workspace / name).write_text(name)
    (place.workspace / "sub").mkdir()
    os.mkfifo(place.workspace / "z-pipe")
    tools = place.tools(max_list_entries=3)
    assert (await place.tools().list(".")).splitlines() == [
        "a.txt  5 bytes",
        "b.txt  5 bytes",
        "c.txt  5 bytes",
        "sub/",
        "z-pipe  (not a regular file)",
    ]
    capped = (await tools.list(".")).splitlines()
    assert capped[:3] == ["a.txt  5 bytes", "b.txt  5 bytes", "c.txt  5 bytes"]
    assert capped[3].startswith("[2 more entries not shown, of 5")
    assert await tools.list("sub") == "(sub is an empty folder)"


async def test_a_nul_byte_in_any_argument_is_refused(place: Place) -> None:
    (place.workspace / "a.txt").write_text("text")
    tools = place.tools()
    for call in (
        tools.write("a.txt", "bad\0"),
        tools.edit("a.txt", "te\0", "x"),
        tools.edit("a.txt", "text", "\0"),
        tools.find("\0", "."),
        tools.run("echo \0"),
        tools.read("a.txt\0"),
    ):
        with pytest.raises(Invalid, match="NUL"):
            await call
    assert (place.workspace / "a.txt").read_text() == "text"


async def test_a_missing_workspace_is_unavailable(tmp_path: Path) -> None:
    place = Place(tmp_path / "gone", tmp_path)
    from parley.errors import Unavailable

    with pytest.raises(Unavailable, match="workspace"):
        await place.tools().read("a.txt")
    with pytest.raises(Unavailable, match="workspace"):
        await place.tools().run("true")
