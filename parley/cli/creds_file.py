"""A node's credentials as files: written 0600 by ``parley node add`` on the hub's machine,
read by ``parley node join`` on the node's — from a file only its owner may read, or from
``PARLEY_NODE_CREDENTIALS`` (the file's text, taken out of the environment at once). Never the
secret itself on the command line: any process of the machine reads ``/proc/*/cmdline``."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from parley.errors import Conflict, Invalid

CREDENTIALS_ENV = "PARLEY_NODE_CREDENTIALS"


def creds_path(name: str, out: Path | None) -> Path:
    return out if out is not None else Path(f"{name}.creds")


def refuse_overwrite(path: Path, replace: bool) -> None:
    """Checked before the hub issues anything: credentials issued and not written are lost."""
    if path.exists() and not replace:
        raise Conflict(f"{path} exists already; give another --out FILE, or pass --replace")


def write_creds(path: Path, text: str) -> None:
    """Readable by its owner only, from its first byte."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        os.fchmod(file.fileno(), 0o600)  # an older file kept its mode through O_TRUNC
        file.write(text)


def read_creds(path: Path | None, from_env: str | None) -> str:
    """The node's credentials: ``path``'s text (a file others cannot read), else the
    environment's ``from_env``."""
    if path is None:
        if not from_env:
            raise Invalid(
                "no credentials: give --credentials FILE (the .creds file `parley node add NAME`"
                f" wrote on the hub's machine) or set {CREDENTIALS_ENV} to its text"
            )
        return from_env
    try:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise Invalid(
                f"{path} may be read by others (mode {stat.S_IMODE(mode):04o}): chmod 600 {path},"
                " then join again"
            )
        return path.read_text()
    except OSError as exc:
        raise Invalid(f"cannot read the credentials {path}: {exc.strerror}") from exc
