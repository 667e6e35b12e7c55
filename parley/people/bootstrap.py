"""First start: an installation with nobody in it gets its owner, whose token the CLI then finds."""

from __future__ import annotations

from pathlib import Path

from parley.clock import Clock
from parley.datafolder import DataFolder, write_secret
from parley.people.accounts import add_person
from parley.people.model import Role
from parley.store import Store


def owner_token_path(data_dir: Path) -> Path:
    return DataFolder(data_dir).owner_token


async def ensure_owner(store: Store, clock: Clock, data_dir: Path, owner_name: str) -> Path | None:
    """Create the first owner if nobody exists; return where its token was saved, else None."""
    async with store.transaction() as tx:
        if await tx.people.count() > 0:
            return None
        created = await add_person(tx, clock, owner_name, Role.OWNER)
        path = owner_token_path(data_dir)
        DataFolder(data_dir).create()
        write_secret(path, created.token)
    return path
