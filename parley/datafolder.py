"""The data folder: where each file of an installation lives, who may read it, who holds it.

    parley-data/              0700 when Parley makes it
      private/                0700: what only the server (and its operator) reads
        parley.db             the SQLite store (0600; -wal and -shm get the same mode)
        owner-token           the first owner's API token (0600)
        broker/               the mesh broker's keys and the hub's credentials (0700, files
                              0600; parley/mesh/broker_auth.py)
        server.lock           held by the running server: one server per data folder
        server-url            where the running server listens, for the CLI (gone once it stops)
        brains/               process groups of running command brains, one file per turn
      workspaces/AGENT/       the agents' workspaces, where their command brains run
      tmp/                    0700: each command brain turn's own TMPDIR, gone after the turn

Command brains are confined so that nothing under ``private/`` can be read or changed from
them (see ``brains/launcher.py``). Folders made before ``private/`` existed are moved into it at
the first start.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from parley.errors import Unavailable

log = logging.getLogger(__name__)

PRIVATE_MODE = 0o700
SECRET_MODE = 0o600
# Files that lived at the top of the data folder before private/ existed (the join token is
# retired, but a secret left at the top is still moved out of brains' reach).
_LEGACY_TOKENS = ("owner-token", "join-token")
_LEGACY_STORE = ("parley.db", "parley.db-wal", "parley.db-shm")


@dataclass(frozen=True)
class DataFolder:
    root: Path

    @property
    def private(self) -> Path:
        return self.root / "private"

    @property
    def database(self) -> Path:
        return self.private / "parley.db"

    @property
    def owner_token(self) -> Path:
        return self.private / "owner-token"

    @property
    def server_lock(self) -> Path:
        return self.private / "server.lock"

    @property
    def server_url(self) -> Path:
        return self.private / "server-url"

    @property
    def web_secret(self) -> Path:
        return self.private / "web-secret"

    @property
    def brain_groups(self) -> Path:
        return self.private / "brains"

    @property
    def workspaces(self) -> Path:
        return self.root / "workspaces"

    @property
    def run_temp(self) -> Path:
        """Where each command brain turn gets a temporary folder of its own."""
        return self.root / "tmp"

    def clear_run_temp(self) -> None:
        """Remove the temporary folders a killed life of this node left (each turn removes its
        own when it ends)."""
        if self.run_temp.is_dir():
            for left in self.run_temp.iterdir():
                shutil.rmtree(left, ignore_errors=True)

    def create(self) -> None:
        """Make the folder (0700 if new) and its private part (always 0700)."""
        if not self.root.exists():
            self.root.mkdir(mode=PRIVATE_MODE, parents=True)
        self.private.mkdir(mode=PRIVATE_MODE, exist_ok=True)
        self.private.chmod(PRIVATE_MODE)  # whatever umask or an older Parley made it with

    def prepare(self, default_store: bool) -> None:
        """Make the folder and move what an older Parley left at its top into ``private/``.
        With the ``default_store`` (SQLite here), move the store too and create its file 0600:
        SQLite gives its -wal and -shm files the same mode."""
        self.create()
        for name in _LEGACY_TOKENS + (_LEGACY_STORE if default_store else ()):
            old, new = self.root / name, self.private / name
            if old.exists() and not new.exists():
                old.rename(new)
                log.info("moved %s to %s", old, new)
        self.brain_groups.mkdir(mode=PRIVATE_MODE, exist_ok=True)
        self.run_temp.mkdir(mode=PRIVATE_MODE, exist_ok=True)
        if default_store and not self.database.exists():
            os.close(os.open(self.database, os.O_WRONLY | os.O_CREAT, SECRET_MODE))


def write_secret(path: Path, secret: str, exclusive: bool = False) -> None:
    """Write a one-line secret readable by its owner only."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    with os.fdopen(os.open(path, flags, SECRET_MODE), "w") as file:
        file.write(secret + "\n")


def write_replacing(path: Path, text: str) -> None:
    """Write a one-line file readable by its owner only, whole: a reader sees the old line or the
    new one, never half of it."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    write_secret(partial, text)
    os.replace(partial, path)


@contextlib.contextmanager
def announcing_url(folder: DataFolder, url: str) -> Iterator[None]:
    """Say where this server listens in ``server-url`` for its life; the server lock makes it
    the only one that writes there. A server that dies leaves it, pointing where nobody answers."""
    write_replacing(folder.server_url, url)
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            folder.server_url.unlink()


@contextlib.contextmanager
def holding_server_lock(folder: DataFolder, url: str) -> Iterator[None]:
    """Hold the data folder for this server's life; refuse if another server holds it.

    An exclusive ``flock`` is released by the kernel however the holder ends (even SIGKILL), so
    a lock left by a dead server never blocks a start. The file says who holds it, for the
    message the next one prints."""
    try:
        folder.create()
        descriptor = os.open(folder.server_lock, os.O_RDWR | os.O_CREAT, SECRET_MODE)
    except OSError as exc:
        raise Unavailable(f"cannot use the data folder {folder.root}: {exc.strerror}") from exc
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EACCES):
                raise
            holder = os.pread(descriptor, 4096, 0).decode(errors="replace").split()
            raise Unavailable(_held_by(folder, holder)) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()} {url}\n".encode(), 0)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _held_by(folder: DataFolder, holder: list[str]) -> str:
    who = f"pid {holder[0]}, {holder[1]}" if len(holder) == 2 else "starting up"
    return (
        f"another Parley server ({who}) is running on the data folder {folder.root};"
        " stop it first, or give this one another --data-dir"
    )
