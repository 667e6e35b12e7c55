"""Keeping the secrets a Parley process holds away from the other processes of its machine.

A command brain runs as the same user as the server or node that starts it (confined, and as
root without any capability). Whatever that process holds in its environment or memory must not
be readable by the brain through ``/proc``; and what it read from its environment must not be
inherited by what it starts.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger(__name__)

_PR_SET_DUMPABLE = 4  # prctl(2)


def protect_process() -> None:
    """Make this process non-dumpable (Linux; elsewhere nothing).

    What it buys: a process of the same user without ``CAP_SYS_PTRACE`` — a brain, whose
    capabilities are dropped even as root — can no longer read this process's
    ``/proc/<pid>/environ``, ``mem``, ``fd/*``, ``maps`` nor attach a debugger to it (the
    kernel's ptrace access check refuses a non-dumpable target), and no core dump of it is
    written. (Run as root, the server holds capabilities a brain lacks, which the same check
    refuses already; for any other user, this is what does.) It also makes this process's
    ``/proc/<pid>/`` files owned by root. What it does not hide: ``/proc/<pid>/cmdline``,
    readable by everyone — so nothing secret is ever put on a Parley command line. Children
    get their own dumpable flag back at ``exec``: the brains' processes are not affected.
    Failing, it logs at DEBUG and carries on: it is one layer (the brains' Landlock
    confinement is another), not a reason to refuse to start.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
        prctl.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
        if prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, os.strerror(errno))
    except (OSError, AttributeError) as error:
        log.debug("could not make this process non-dumpable: %s", error)


def take_env_secret(name: str) -> str | None:
    """The value of the environment variable ``name`` (None if unset), removed from this
    process's environment so that no process it starts inherits it.

    ``/proc/<pid>/environ`` still shows the environment the process was started with (the
    kernel keeps that copy, whatever ``os.environ`` becomes): :func:`protect_process` is what
    keeps other processes of the user from reading it there."""
    return os.environ.pop(name, None)
