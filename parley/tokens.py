"""Bearer tokens, of four kinds told apart by their prefix, so that each is refused where
another kind is expected: a person's API token (``pk_``), a run's (``prt_``: a brain's authority
for one running turn, valid while the run runs), a peer installation's (``ppt_``: what each
side of a connection issued the other at the handshake) and an A2A client's (``pac_``, on
``/a2a/`` alone). Random, shown once, stored only as a hash."""

from __future__ import annotations

import hashlib
import secrets

from parley.errors import Unauthorized

TOKEN_PREFIX = "pk_"
RUN_TOKEN_PREFIX = "prt_"
PEER_TOKEN_PREFIX = "ppt_"
A2A_TOKEN_PREFIX = "pac_"  # an A2A client's, on /a2a/ alone


def new_token(prefix: str = TOKEN_PREFIX) -> str:
    return prefix + secrets.token_urlsafe(32)


def new_run_token() -> str:
    return new_token(RUN_TOKEN_PREFIX)


def new_peer_token() -> str:
    return new_token(PEER_TOKEN_PREFIX)


def new_a2a_token() -> str:
    return new_token(A2A_TOKEN_PREFIX)


def a2a_token_hash(token: str | None) -> str:
    """The hash to look an A2A client's bearer token up by; Unauthorized for anything else."""
    return _kind_hash(
        token,
        A2A_TOKEN_PREFIX,
        "no A2A client token: send 'Authorization: Bearer <your token>'",
        "this route takes an A2A client's token (pac_…); a person's, a run's or a peer's is"
        " refused here",
    )


def hash_token(token: str) -> str:
    # Tokens carry 256 random bits, so a plain digest cannot be brute-forced; no salt needed.
    return hashlib.sha256(token.encode()).hexdigest()


def peer_token_hash(token: str | None) -> str:
    """The hash to look a peer's bearer token up by; Unauthorized for anything else."""
    return _kind_hash(
        token,
        PEER_TOKEN_PREFIX,
        "no peer token: send 'Authorization: Bearer <the token we issued>'",
        "this route takes a peer installation's token; a person's or a run's is refused here",
    )


def _kind_hash(token: str | None, prefix: str, missing: str, other_kind: str) -> str:
    """The hash of a token of one kind (by its prefix); Unauthorized, in these words, when
    there is none or it is of another kind."""
    if not token:
        raise Unauthorized(missing)
    if not token.startswith(prefix):
        raise Unauthorized(other_kind)
    return hash_token(token)
