"""Installations for federation tests: each a real server on a loopback port with a store of
its own (a SQLite file each, or a PostgreSQL database each), its own data folder, broker and
node — never one process's app pretending to be two."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import create_database, drop_database, empty_tables, sqlite_copy

PEERS = 3  # the most installations one test starts


@pytest.fixture(scope="session")
def peer_postgres_urls(postgres_url: str) -> Iterator[list[str]]:
    """Databases for the installations after the first (which has ``postgres_url``)."""
    names = [f"parley_test_{os.getpid()}_peer{i}" for i in range(1, PEERS)]
    urls = [asyncio.run(create_database(name)) for name in names]
    yield urls
    for name in names:
        asyncio.run(drop_database(name))


@pytest.fixture
def store_urls(request: pytest.FixtureRequest, database_url: str, tmp_path: Path) -> list[str]:
    """One store URL per installation, on the backend of ``database_url``."""
    if database_url.startswith("sqlite"):
        template: Path = request.getfixturevalue("sqlite_template")
        peers = [sqlite_copy(template, tmp_path / f"peer{i}.db") for i in range(1, PEERS)]
        return [database_url, *peers]
    others: list[str] = request.getfixturevalue("peer_postgres_urls")
    for url in others:
        asyncio.run(empty_tables(url))
    return [database_url, *others]
