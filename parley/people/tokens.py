"""API tokens: random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "pk_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    # Tokens carry 256 random bits, so a plain digest cannot be brute-forced; no salt needed.
    return hashlib.sha256(token.encode()).hexdigest()
