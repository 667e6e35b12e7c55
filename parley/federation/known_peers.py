"""Which connection a peer's token is for, remembered once a transaction found it: the frames
route checks the token before it reads the body, and a transaction for that alone was a fifth
of what a batch cost the receiving side. A remembered token grants nothing more: the batch's
own transaction reads its connection again under a lock (paused, revoked since) and checks it
is the same one. Only tokens of known connections are kept, so a stranger cannot fill it."""

from __future__ import annotations

from parley.federation.model import Connection

LIMIT = 1024  # connections an installation talks to: far fewer; past it, the oldest goes


class KnownPeers:
    def __init__(self, limit: int = LIMIT) -> None:
        self._limit = limit
        self._by_token_hash: dict[str, Connection] = {}

    def get(self, token_hash: str) -> Connection | None:
        return self._by_token_hash.get(token_hash)

    def remember(self, token_hash: str, connection: Connection) -> None:
        if token_hash not in self._by_token_hash and len(self._by_token_hash) >= self._limit:
            del self._by_token_hash[next(iter(self._by_token_hash))]
        self._by_token_hash[token_hash] = connection
