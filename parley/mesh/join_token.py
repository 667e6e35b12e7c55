"""The mesh's join token: a node that knows it is part of the mesh; it is the whole perimeter."""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path

from parley.datafolder import DataFolder, write_secret


def load_or_create_join_token(data_dir: Path) -> str:
    folder = DataFolder(data_dir)
    if folder.join_token.exists():
        return folder.join_token.read_text().strip()
    folder.create()
    token = "pj_" + secrets.token_urlsafe(32)
    write_secret(folder.join_token, token, exclusive=True)
    return token


def join_token_matches(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())
