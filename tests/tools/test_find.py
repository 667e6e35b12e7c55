"""find: literal text in the text files under a path, as ``relpath:line: content``; binary and
big files skipped, links not followed, the matches capped, each said in the summary."""

from __future__ import annotations

import os

import pytest

from parley.errors import Forbidden, Invalid
from tests.tools.support import Place


def files(place: Place, contents: dict[str, bytes]) -> None:
    for name, data in contents.items():
        path = place.workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


async def test_matches_are_listed_by_path_and_line(place: Place) -> None:
    files(
        place,
        {
            "src/app.py": b"import os\nTODO: fix\nprint('TODO')\n",
            "README.md": b"no todo here (lower case)\nTODO once\n",
            "src/deep/x.txt": b"aTODOb\n",
        },
    )
    result = (await place.tools().find("TODO", ".")).splitlines()
    assert result[:-1] == [
        "README.md:2: TODO once",
        "src/app.py:2: TODO: fix",
        "src/app.py:3: print('TODO')",
        "src/deep/x.txt:1: aTODOb",
    ]
    assert result[-1].startswith("[4 matches in 3 files; ")
    under_src = (await place.tools().find("TODO", "src")).splitlines()
    assert under_src[0] == "src/app.py:2: TODO: fix" and len(under_src) == 4
    assert (await place.tools().find("TODO", "src/deep/x.txt")).startswith("src/deep/x.txt:1:")


async def test_the_text_is_literal_not_a_pattern(place: Place) -> None:
    files(place, {"a.txt": b"abc\na.c\n"})
    result = await place.tools().find("a.c", ".")
    assert result.splitlines()[0] == "a.txt:2: a.c"
    assert result.splitlines()[1].startswith("[1 matches")
    assert (await place.tools().find("A.C", ".")).startswith("[no match for 'A.C'")


async def test_binary_and_big_files_are_skipped_and_said_so(place: Place) -> None:
    files(
        place,
        {
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00needle",
            "latin.txt": b"needle caf\xe9\n",
            "big.log": b"needle\n" * 200,
            "small.txt": b"a needle\n",
        },
    )
    result = (await place.tools(max_find_file_bytes=1000).find("needle", ".")).splitlines()
    assert result[0] == "small.txt:1: a needle"
    assert "2 binary files skipped" in result[1]
    assert "1 files over 1000 bytes skipped" in result[1]


async def test_matches_are_capped_and_long_lines_shortened(place: Place) -> None:
    files(place, {"many.txt": b"hit\n" * 50, "long.txt": b"hit" + b"x" * 1000 + b"\n"})
    result = (await place.tools(max_find_matches=10).find("hit", ".")).splitlines()
    assert result[0] == "long.txt:1: hit" + "x" * 297 + "…"
    assert len(result) == 11
    assert "stopped at 10 matches: narrow the path or the text" in result[-1]


async def test_the_walk_stops_after_so_many_files(place: Place) -> None:
    files(place, {f"f{n:02}.txt": b"hit\n" for n in range(20)})
    result = (await place.tools(max_find_files=5).find("hit", ".")).splitlines()
    assert len(result) == 6
    assert "stopped after examining 5 files and folders" in result[-1]


async def test_find_does_not_follow_links_out(place: Place) -> None:
    (place.workspace / "sib").symlink_to(place.sibling)
    (place.workspace / "etc").symlink_to("/etc")
    result = await place.tools().find("secret", ".")
    assert result.startswith("[no match for 'secret'")
    assert "2 symbolic links not followed" in result
    for path in ("sib", "etc", "sib/secret.txt"):
        with pytest.raises(Forbidden):
            await place.tools().find("secret", path)


async def test_an_empty_text_or_a_fifo_is_refused(place: Place) -> None:
    os.mkfifo(place.workspace / "pipe")
    with pytest.raises(Invalid, match="empty"):
        await place.tools().find("", ".")
    with pytest.raises(Invalid, match="not a regular file"):
        await place.tools().find("x", "pipe")
    assert "[no match" in await place.tools().find("x", ".")  # a FIFO in the walk is passed
