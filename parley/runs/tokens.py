"""Run tokens: a brain's authority for one running turn. Random, stored only as a hash, valid
only while the run is running."""

from __future__ import annotations

import secrets

from parley.errors import Unauthorized
from parley.people.tokens import hash_token
from parley.runs.model import Run
from parley.store import Tx

RUN_TOKEN_PREFIX = "prt_"


def new_run_token() -> str:
    return RUN_TOKEN_PREFIX + secrets.token_urlsafe(32)


async def running_run(tx: Tx, token: str | None) -> Run:
    """The running run a token belongs to; without one there is no topic to act in."""
    if not token or not token.startswith(RUN_TOKEN_PREFIX):
        raise Unauthorized(
            "a role token without a run has no topic: actions need the PARLEY_RUN_TOKEN of a"
            " running turn"
        )
    run = await tx.runs.running_by_token_hash(hash_token(token))
    if run is None:
        raise Unauthorized("this run token belongs to no running turn (it ended or was stopped)")
    return run
