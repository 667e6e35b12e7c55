"""Secrets out of a brain's reach: Parley's processes cannot be inspected by another process of
the same user, and a secret given in the environment is taken out of it at once.

Minimal stand-in written by the node-creds helper; the `secrets` helper's version replaces it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os

PR_SET_DUMPABLE = 4


def protect_process() -> None:
    """Not dumpable: another process of the same uid (a brain) cannot read this one's
    ``/proc/<pid>/environ``, ``mem`` nor ``fd``. Linux only; elsewhere nothing happens."""
    name = ctypes.util.find_library("c")
    if name is None:
        return
    libc = ctypes.CDLL(name, use_errno=True)
    prctl = getattr(libc, "prctl", None)
    if prctl is not None:
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def take_env_secret(name: str) -> str | None:
    """The variable's value, removed from the environment so that no child inherits it."""
    return os.environ.pop(name, None)
