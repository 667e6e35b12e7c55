"""Confinement of an agent's file tools to its workspace: a path the model gives is checked,
then opened beneath the workspace, never outside it.

The rule has two halves. A path's spelling: relative, no ``..`` component, no NUL byte, not
empty, at most 4096 bytes (``checked``). And its resolution: on Linux ≥ 5.6 every path is
opened with ``openat2(2)`` from a descriptor of the workspace with ``RESOLVE_BENEATH`` (the
kernel refuses any step, a symbolic link's included, that leaves it, at the moment of opening,
so no link swapped in meanwhile can lead out) and ``RESOLVE_NO_MAGICLINKS`` (no
``/proc/self/fd/…`` jump). Without ``openat2`` the path's real path must lie within the
workspace's, and the last step is opened with ``O_NOFOLLOW``: narrower, as a link swapped in
between the check and the open of a folder above is not caught. Symbolic links that stay within
the workspace are followed either way.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
from collections.abc import Iterator
from pathlib import Path

from parley.brains.launcher import syscall
from parley.errors import Forbidden, Invalid, NotFound, ParleyError, Unavailable
from parley.text import refuse_nul

MAX_PATH_BYTES = 4096
WORKSPACE = "."

# openat2(2): one number on every architecture of the unified system call table.
_SYS_OPENAT2 = 437
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_RETRIES = 16


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


def checked(path: str, *, workspace_ok: bool = False) -> str:
    """``path`` normalized (empty and ``.`` steps dropped; ``.`` for the workspace itself), or
    the reason it is refused. ``workspace_ok``: the workspace itself may be named."""
    refuse_nul(path, "path")
    if not path:
        raise Invalid("the path is empty: give one relative to the workspace, e.g. notes.txt")
    try:
        size = len(os.fsencode(path))
    except UnicodeEncodeError:
        raise Invalid("the path is not valid text (a lone surrogate)") from None
    if size > MAX_PATH_BYTES:
        raise Invalid(f"the path is longer than {MAX_PATH_BYTES} bytes ({size})")
    if path.startswith("/"):
        raise Forbidden(f"{path!r} is absolute: paths are relative to your workspace")
    steps = [step for step in path.split("/") if step not in ("", ".")]
    if ".." in steps:
        raise Forbidden(f"{path!r} has a '..' step: paths may not leave your workspace")
    if not steps and not workspace_ok:
        raise Invalid(f"{path!r} names the workspace itself: name a file within it")
    return "/".join(steps) or WORKSPACE


def refusal(error: OSError, path: str) -> ParleyError:
    """What the model reads when the system refused ``path``."""
    number = error.errno
    if number == errno.ENOENT:
        return NotFound(f"{path!r} does not exist in your workspace")
    if number == errno.EXDEV:
        return Forbidden(f"{path!r} leads out of your workspace (through a symbolic link)")
    if number == errno.ELOOP:
        return Forbidden(f"{path!r} goes through a symbolic link the tools do not follow")
    if number == errno.ENOTDIR:
        return NotFound(f"{path!r} does not exist: a step of it is a file, not a folder")
    if number == errno.EISDIR:
        return Invalid(f"{path!r} is a folder")
    if number in (errno.EACCES, errno.EPERM):
        return Forbidden(f"{path!r}: permission denied")
    if number == errno.ENAMETOOLONG:
        return Invalid(f"{path!r}: a name in it is too long")
    if number in (errno.ENOSPC, errno.EDQUOT):
        return Unavailable(f"{path!r}: no space left in the workspace")
    return Unavailable(f"{path!r}: {error.strerror or error}")


class Beneath:
    """A workspace, opened: each path is opened beneath it (see the module's docstring)."""

    def __init__(self, root: Path) -> None:
        try:
            self.fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise Unavailable(f"your workspace {str(root)!r} is missing: {error}") from None
        self.real = os.path.realpath(root)

    def close(self) -> None:
        os.close(self.fd)

    def open(self, path: str, flags: int, mode: int = 0) -> int:
        """A descriptor of ``path`` (as ``checked`` gave it) beneath the workspace."""
        flags |= os.O_CLOEXEC
        if path == WORKSPACE:
            return os.open(".", flags, mode, dir_fd=self.fd)
        if openat2_works():
            return _openat2(self.fd, path, flags, mode)
        real = self.within(path)
        return os.open(real, flags | os.O_NOFOLLOW, mode)

    @contextlib.contextmanager
    def opened(self, path: str, flags: int, mode: int = 0) -> Iterator[int]:
        fd = self.open(path, flags, mode)
        try:
            yield fd
        finally:
            os.close(fd)

    def real_path(self, path: str) -> str:
        """``path`` with every symbolic link in it resolved, relative to the workspace (for a
        new file, its path as given); an error if it leads out."""
        if not openat2_works():
            return os.path.relpath(self.within(path), self.real)
        try:
            fd = self.open(path, os.O_PATH)
        except FileNotFoundError:
            return path
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return checked(os.path.relpath(real, self.real), workspace_ok=True)

    def within(self, path: str) -> str:
        """``path``'s real path, if it lies within the workspace (the fallback's check)."""
        real = os.path.realpath(os.path.join(self.real, path))
        if os.path.commonpath([real, self.real]) != self.real:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        return real


@contextlib.contextmanager
def workspace(root: Path) -> Iterator[Beneath]:
    opened = Beneath(root)
    try:
        yield opened
    finally:
        opened.close()


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int:
    # O_CREAT's mode only: openat2 refuses a mode with any other flags.
    how = _OpenHow(
        flags=flags,
        mode=mode if flags & os.O_CREAT else 0,
        resolve=_RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS,
    )
    for _ in range(_RETRIES):
        try:
            return syscall(
                _SYS_OPENAT2,
                dirfd,
                ctypes.c_char_p(os.fsencode(path)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
        except InterruptedError:
            continue  # EINTR (a signal while opening a FIFO, say): as open(2) would, retry
        except OSError as error:
            if error.errno == errno.EAGAIN:
                continue  # RESOLVE_* raced with a rename elsewhere: the kernel asks to retry
            raise
    raise OSError(errno.EAGAIN, "the workspace kept changing while the path was opened")


@functools.cache
def openat2_works() -> bool:
    """Whether this kernel has ``openat2`` (a container's filter may refuse it: EPERM)."""
    try:
        os.close(_openat2(-100, ".", os.O_PATH | os.O_CLOEXEC, 0))  # AT_FDCWD
    except OSError as error:
        if error.errno in (errno.ENOSYS, errno.EPERM):
            return False
        raise
    return True
