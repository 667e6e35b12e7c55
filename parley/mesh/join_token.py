"""The mesh's join token: a node that knows it is part of the mesh; it is the whole perimeter."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

JOIN_TOKEN_FILE = "join-token"


def load_or_create_join_token(data_dir: Path) -> str:
    path = data_dir / JOIN_TOKEN_FILE
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    token = "pj_" + secrets.token_urlsafe(32)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(token + "\n")
    return token


def join_token_matches(expected: str, given: str) -> bool:
    return hmac.compare_digest(expected.encode(), given.encode())
