"""The ``find`` tool's work, blocking: a literal, case-sensitive text in the text files under a
path of the workspace, as ``relpath:line: content`` lines.

The walk opens each folder from its parent's descriptor without following symbolic links
(``O_NOFOLLOW``), so it never leaves the starting folder, nor loops; links are skipped. It
examines at most ``max_find_files`` entries, skips binary files and those bigger than
``max_find_file_bytes``, and stops at ``max_find_matches``, saying each in its summary.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from parley.errors import Invalid, ParleyError
from parley.tools.files import decoded
from parley.tools.limits import ToolLimits
from parley.tools.paths import WORKSPACE, Beneath, refusal

MAX_LINE = 300
# Folders nested deeper are not entered (each level holds a descriptor open).
MAX_DEPTH = 64
_OPEN = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class _Search:
    text: str
    limits: ToolLimits
    matches: list[str] = field(default_factory=list)
    files_matched: int = 0
    examined: int = 0
    binary: int = 0
    big: int = 0
    links: int = 0
    too_deep: int = 0
    stopped: str = ""


def find(ws: Beneath, text: str, path: str, limits: ToolLimits) -> str:
    if not text:
        raise Invalid("the text to find is empty")
    search = _Search(text, limits)
    try:
        with ws.opened(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY) as fd:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                _walk(search, fd, "" if path == WORKSPACE else f"{path}/")
            elif stat.S_ISREG(info.st_mode):
                _search_file(search, fd, path, info)
            else:
                raise Invalid(f"{path!r} is not a regular file (a FIFO, socket or device)")
    except OSError as error:
        raise refusal(error, path) from None
    return "\n".join([*search.matches, _summary(search, path)])


def _walk(search: _Search, top: int, prefix: str) -> None:
    """Depth first, in name order; each level's descriptor closed when it is done."""
    stack: list[tuple[int, str, Iterator[str]]] = [(top, prefix, _names(top))]
    try:
        while stack and not search.stopped:
            fd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if fd != top:
                    os.close(fd)
                continue
            inner = _visit(search, fd, name, prefix, depth=len(stack))
            if inner is not None:
                try:
                    stack.append((inner, f"{prefix}{name}/", _names(inner)))
                except OSError:
                    os.close(inner)  # unreadable: not this search's business
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)


def _names(fd: int) -> Iterator[str]:
    return iter(sorted(entry.name for entry in os.scandir(fd)))


def _visit(search: _Search, fd: int, name: str, prefix: str, depth: int) -> int | None:
    """Search the entry ``name`` of folder ``fd``; a folder's descriptor, to walk into."""
    search.examined += 1
    if search.examined >= search.limits.max_find_files:
        search.stopped = f"stopped after examining {search.examined} files and folders"
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            search.links += 1
        elif stat.S_ISDIR(info.st_mode):
            if depth < MAX_DEPTH:
                return os.open(name, _FOLDER, dir_fd=fd)
            search.too_deep += 1
        elif stat.S_ISREG(info.st_mode):
            with _opened(name, fd) as file:
                _search_file(search, file, f"{prefix}{name}", os.fstat(file))
    except OSError:
        pass  # gone meanwhile, or unreadable: not this search's business
    return None


@contextlib.contextmanager
def _opened(name: str, folder: int) -> Iterator[int]:
    fd = os.open(name, _OPEN, dir_fd=folder)
    try:
        yield fd
    finally:
        os.close(fd)


def _search_file(search: _Search, fd: int, path: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        return  # swapped for something else since it was looked at
    if info.st_size > search.limits.max_find_file_bytes:
        search.big += 1
        return
    data = os.read(fd, search.limits.max_find_file_bytes + 1)
    try:
        text = decoded(data[: search.limits.max_find_file_bytes], path, final=True)
    except ParleyError:
        search.binary += 1
        return
    if search.text not in text:
        return
    search.files_matched += 1
    for number, line in enumerate(text.splitlines(), 1):
        if search.text in line:
            if len(search.matches) >= search.limits.max_find_matches:
                search.stopped = f"stopped at {len(search.matches)} matches"
                return
            search.matches.append(f"{path}:{number}: {_shortened(line)}")


def _shortened(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[:MAX_LINE] + "…"


def _summary(search: _Search, path: str) -> str:
    found = (
        f"{len(search.matches)} matches in {search.files_matched} files"
        if search.matches
        else f"no match for {search.text!r}"
    )
    notes = [f"{search.examined} entries examined under {path}"]
    if search.binary:
        notes.append(f"{search.binary} binary files skipped")
    if search.big:
        notes.append(f"{search.big} files over {search.limits.max_find_file_bytes} bytes skipped")
    if search.links:
        notes.append(f"{search.links} symbolic links not followed")
    if search.too_deep:
        notes.append(f"{search.too_deep} folders deeper than {MAX_DEPTH} levels skipped")
    if search.stopped:
        notes.append(f"{search.stopped}: narrow the path or the text to see the rest")
    return f"[{found}; {'; '.join(notes)}]"
