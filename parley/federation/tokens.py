"""Peer tokens: what each side of a connection issued the other at the handshake. Random, with a
prefix of their own so that a person's token (``pk_``) or a run's (``prt_``) is told apart and
refused where a peer's is expected, and the other way round. The issuer keeps only the hash."""

from __future__ import annotations

import secrets

from parley.errors import Unauthorized
from parley.people.tokens import hash_token

PEER_TOKEN_PREFIX = "ppt_"


def new_peer_token() -> str:
    return PEER_TOKEN_PREFIX + secrets.token_urlsafe(32)


def peer_token_hash(token: str | None) -> str:
    """The hash to look a peer's bearer token up by; Unauthorized for anything else."""
    if not token:
        raise Unauthorized("no peer token: send 'Authorization: Bearer <the token we issued>'")
    if not token.startswith(PEER_TOKEN_PREFIX):
        raise Unauthorized(
            "this route takes a peer installation's token; a person's or a run's is refused here"
        )
    return hash_token(token)
