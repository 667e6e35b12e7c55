"""The file tools' work, blocking (``workspace.py`` runs it in a thread): read, write, edit and
list, every path opened beneath the workspace (``paths.py``).

Only regular files are read or replaced: a folder, a FIFO, a socket or a device is refused,
and each is opened non-blocking, so that a FIFO cannot hang a read. A write goes to a temporary
file in the target's folder, then takes its place (rename): a reader sees the old file or the
new one, never half of one.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import secrets
import stat
from collections.abc import Iterator

from parley.errors import Invalid
from parley.tools.limits import ToolLimits
from parley.tools.paths import WORKSPACE, Beneath, refusal

# A NUL within a file's first 8 KiB marks it binary (as git and grep decide).
BINARY_SNIFF = 8 * 1024
_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY
_FOLDER = os.O_RDONLY | os.O_DIRECTORY
_NEW_MODE = 0o666  # less the umask, as any new file


def read(ws: Beneath, path: str, limits: ToolLimits) -> str:
    with _refused_as(path), ws.opened(path, _READ) as fd:
        size = _regular(os.fstat(fd), path).st_size
        data = _read_up_to(fd, limits.max_read_bytes + 1)
    cut = len(data) > limits.max_read_bytes
    text = decoded(data[: limits.max_read_bytes], path, final=not cut)
    if not data:
        return f"({path} is empty)"
    if cut:
        shown = len(text.encode())
        text += (
            f"\n[cut: this is the first {shown} bytes of {path}, which has"
            f" {max(size, len(data))}; see the rest with find, or with run and"
            f" sed -n '100,200p' {path}, head or tail]"
        )
    return text


def write(ws: Beneath, path: str, content: str, limits: ToolLimits) -> str:
    data = _within_cap(content, limits, "the content")
    with _refused_as(path):
        target = ws.real_path(path)
        if target == WORKSPACE:
            raise Invalid(f"{path!r} is your workspace itself: name a file within it")
        _replace(ws, target, data, path, mode=None)
    return f"wrote {len(data)} bytes to {path}"


def edit(ws: Beneath, path: str, old: str, new: str, limits: ToolLimits) -> str:
    if not old:
        raise Invalid("the text to replace is empty: give text that occurs once in the file")
    with _refused_as(path):
        target = ws.real_path(path)
        with ws.opened(target, _READ) as fd:
            info = _regular(os.fstat(fd), path)
            if info.st_size > limits.max_write_bytes + len(old.encode()):
                raise Invalid(
                    f"{path!r} has {info.st_size} bytes: too big to edit (at most"
                    f" {limits.max_write_bytes}); use run with sed"
                )
            text = decoded(_read_up_to(fd, info.st_size + 1), path, final=True)
        count = text.count(old)
        if count != 1:
            where = "does not occur" if count == 0 else f"occurs {count} times"
            raise Invalid(
                f"the text to replace {where} in {path}: it must occur exactly once"
                " (include more of the text around it to make it unique); nothing changed"
            )
        data = _within_cap(text.replace(old, new, 1), limits, "the edited file")
        _replace(ws, target, data, path, mode=stat.S_IMODE(info.st_mode))
    return f"edited {path}: replaced 1 occurrence; it now has {len(data)} bytes"


def listing(ws: Beneath, path: str, limits: ToolLimits) -> str:
    with _refused_as(path), _a_folder(ws, path) as fd:
        names = sorted(entry.name for entry in os.scandir(fd))
        shown = [_entry(fd, name) for name in names[: limits.max_list_entries]]
    if not names:
        return f"({path} is an empty folder)"
    left = len(names) - len(shown)
    if left:
        shown.append(
            f"[{left} more entries not shown, of {len(names)}: list a subfolder, or use run"
            " with ls or find]"
        )
    return "\n".join(shown)


def decoded(data: bytes, path: str, *, final: bool) -> str:
    """``data`` as text, or Invalid if it looks binary. ``final``: all of the file (else a
    character cut at the end of ``data`` is left out, not refused)."""
    if b"\0" in data[:BINARY_SNIFF]:
        raise Invalid(f"{path!r} is a binary file (it holds NUL bytes); the tools read text")
    try:
        return codecs.getincrementaldecoder("utf-8")().decode(data, final=final)
    except UnicodeDecodeError:
        raise Invalid(f"{path!r} is not UTF-8 text; the tools read text only") from None


@contextlib.contextmanager
def _a_folder(ws: Beneath, path: str) -> Iterator[int]:
    try:
        fd = ws.open(path, _FOLDER)
    except NotADirectoryError:
        with ws.opened(path, os.O_PATH):  # it is there: it is no folder
            raise Invalid(f"{path!r} is a file, not a folder: read it instead") from None
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def _refused_as(path: str) -> Iterator[None]:
    """The system's refusals, worded for the model."""
    try:
        yield
    except OSError as error:
        raise refusal(error, path) from None


def _regular(info: os.stat_result, path: str) -> os.stat_result:
    if stat.S_ISDIR(info.st_mode):
        raise Invalid(f"{path!r} is a folder: list it instead")
    if not stat.S_ISREG(info.st_mode):
        raise Invalid(f"{path!r} is not a regular file (a FIFO, socket or device): refused")
    return info


def _read_up_to(fd: int, size: int) -> bytes:
    pieces, left = [], size
    while left > 0 and (piece := os.read(fd, min(left, 1024 * 1024))):
        pieces.append(piece)
        left -= len(piece)
    return b"".join(pieces)


def _within_cap(content: str, limits: ToolLimits, what: str) -> bytes:
    # Never fewer bytes than characters: a huge text is refused before it is encoded.
    size = len(content) if len(content) > limits.max_write_bytes else len(content.encode())
    if size > limits.max_write_bytes:
        raise Invalid(
            f"{what} has at least {size} bytes, more than a write may"
            f" ({limits.max_write_bytes}); nothing was written"
        )
    return content.encode()


def _replace(ws: Beneath, target: str, data: bytes, path: str, mode: int | None) -> None:
    """``target`` (a real path) made to hold ``data``: a temporary file beside it, renamed."""
    folder, _, name = target.rpartition("/")
    with _folder(ws, folder or WORKSPACE) as dirfd:
        with contextlib.suppress(FileNotFoundError):
            existing = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            _regular(existing, path)
            mode = stat.S_IMODE(existing.st_mode) if mode is None else mode
        temp = f".parley-{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temp, flags, _NEW_MODE, dir_fd=dirfd)
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dirfd)
            raise


@contextlib.contextmanager
def _folder(ws: Beneath, folder: str) -> Iterator[int]:
    """A descriptor of ``folder`` in the workspace, made (with those above it) if missing."""
    steps = [] if folder == WORKSPACE else folder.split("/")
    fd = ws.open(WORKSPACE, _FOLDER)
    try:
        for depth, step in enumerate(steps, 1):
            with contextlib.suppress(FileExistsError):
                os.mkdir(step, dir_fd=fd)
            # Opened again from the workspace, beneath it: the step may be a symbolic link.
            inner = ws.open("/".join(steps[:depth]), _FOLDER)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _entry(fd: int, name: str) -> str:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except OSError:
        return f"{name}  (gone meanwhile)"
    if stat.S_ISDIR(info.st_mode):
        return f"{name}/"
    if stat.S_ISREG(info.st_mode):
        return f"{name}  {info.st_size} bytes"
    if stat.S_ISLNK(info.st_mode):
        with contextlib.suppress(OSError):
            return f"{name} -> {os.readlink(name, dir_fd=fd)}"
    return f"{name}  (not a regular file)"
