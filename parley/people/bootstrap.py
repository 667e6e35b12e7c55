"""First start: an installation with nobody in it gets its owner, whose token the CLI then finds."""

from __future__ import annotations

import os
from pathlib import Path

from parley.clock import Clock
from parley.people.accounts import add_person
from parley.people.model import Role
from parley.store import Store

OWNER_TOKEN_FILE = "owner-token"


def owner_token_path(data_dir: Path) -> Path:
    return data_dir / OWNER_TOKEN_FILE


async def ensure_owner(store: Store, clock: Clock, data_dir: Path, owner_name: str) -> Path | None:
    """Create the first owner if nobody exists; return where its token was saved, else None."""
    async with store.transaction() as tx:
        if await tx.people.count() > 0:
            return None
        created = await add_person(tx, clock, owner_name, Role.OWNER)
        path = owner_token_path(data_dir)
        _write_secret(path, created.token)
    return path


def _write_secret(path: Path, secret: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(secret + "\n")
