"""A node's key: the nkey of its broker credentials (the seed in its ``.creds`` file), with which
it signs its registration, so that a name belongs to whoever holds the credentials issued for it
(even on a broker that authenticates nobody). The hub knows each name's public key only."""

from __future__ import annotations

import base64
import binascii
import os
import re
import time
from collections.abc import Callable

import nkeys
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from parley.errors import Invalid
from parley.node.messages import Register

Wall = Callable[[], float]  # the machine's time, seconds since the epoch

# The seed part of a standard NATS .creds file (nsc's and Parley's alike).
_SEED = re.compile(r"-{3,}BEGIN USER NKEY SEED-{3,}\s*(S[A-Z2-7]+)\s*-{3,}END USER NKEY SEED")
_PUBLIC_USER = re.compile(r"U[A-Z2-7]{55}")


class NodeKey:
    """A private key that signs for a node."""

    def __init__(self, seed: str) -> None:
        try:
            self._pair = nkeys.from_seed(seed.encode())
            self.public_key: str = self._pair.public_key.decode()
        except (nkeys.NkeysError, binascii.Error, ValueError) as exc:
            raise Invalid(f"not an nkey seed ({type(exc).__name__})") from None

    @classmethod
    def from_creds(cls, creds: str) -> NodeKey:
        """The key in a ``.creds`` file's text; Invalid if it holds none."""
        found = _SEED.search(creds)
        if found is None:
            raise Invalid(
                "these are not node credentials (no user seed in them): give the .creds file"
                " that `parley node add NAME` wrote on the hub"
            )
        key = cls(found.group(1))
        if not key.public_key.startswith("U"):
            raise Invalid("these credentials hold no user key: give a node's .creds file")
        return key

    @classmethod
    def generated(cls) -> NodeKey:
        """A key of this process's life only (the hub's own node signs with one)."""
        return cls(nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode())

    def sign(self, data: bytes) -> str:
        return base64.urlsafe_b64encode(self._pair.sign(data)).decode()


def signed_by(public_key: str, data: bytes, signature: str) -> bool:
    """Whether ``signature`` is ``public_key``'s over ``data`` (a user nkey, ``U…``)."""
    if _PUBLIC_USER.fullmatch(public_key) is None:
        return False
    try:
        raw = base64.b32decode(public_key + "=" * (-len(public_key) % 8))
        VerifyKey(raw[1:-2]).verify(data, base64.urlsafe_b64decode(signature))
    except (binascii.Error, ValueError, BadSignatureError):
        return False
    return True


def signed_register(key: NodeKey, message: Register, wall: Wall = time.time) -> Register:
    """``message`` (its key and signing time set here) signed by ``key``."""
    unsigned = message.model_copy(
        update={"public_key": key.public_key, "signed_at": int(wall() * 1000), "signature": ""}
    )
    return unsigned.model_copy(update={"signature": key.sign(unsigned.signed_text())})
