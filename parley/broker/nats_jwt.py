"""NATS's decentralised credentials, written by Parley: nkeys, JWTs (claims v2) and ``.creds``.

A JWT is ``header.claims.signature`` (base64url, no padding), the header always
``{"typ":"JWT","alg":"ed25519-nkey"}``, the signature ed25519 by the issuer's nkey over the
first two parts — what nats-server (2.9 and later) reads from ``nsc``'s files. The claims' ``jti``
is the base32 SHA-512/256 of the claims without it, as the Go library makes it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import time
from collections.abc import Mapping
from typing import Any, Literal

import nacl.exceptions
import nacl.signing
import nkeys

from parley.errors import Invalid

Role = Literal["operator", "account", "user"]
_PREFIX = {
    "operator": nkeys.PREFIX_BYTE_OPERATOR,
    "account": nkeys.PREFIX_BYTE_ACCOUNT,
    "user": nkeys.PREFIX_BYTE_USER,
}
_HEADER = {"typ": "JWT", "alg": "ed25519-nkey"}
UNLIMITED = -1
# What an account may hold: everything, JetStream included (non-zero storage enables it).
ACCOUNT_LIMITS = {
    "subs": UNLIMITED,
    "data": UNLIMITED,
    "payload": UNLIMITED,
    "imports": UNLIMITED,
    "exports": UNLIMITED,
    "wildcards": True,
    "conn": UNLIMITED,
    "leaf": UNLIMITED,
}
JETSTREAM_LIMITS = {
    "mem_storage": UNLIMITED,
    "disk_storage": UNLIMITED,
    "streams": UNLIMITED,
    "consumer": UNLIMITED,
}
USER_LIMITS = {"subs": UNLIMITED, "data": UNLIMITED, "payload": UNLIMITED}
_CREDS = re.compile(
    r"-----BEGIN NATS USER JWT-----\s*(?P<jwt>\S+)\s*------END NATS USER JWT------.*?"
    r"-----BEGIN USER NKEY SEED-----\s*(?P<seed>SU[A-Z2-7]+)\s*------END USER NKEY SEED------",
    re.DOTALL,
)


def new_seed(role: Role) -> str:
    """A fresh nkey seed ("SO…", "SA…", "SU…")."""
    return bytes(nkeys.encode_seed(os.urandom(32), _PREFIX[role])).decode()


def key_pair(seed: str) -> nkeys.KeyPair:
    return nkeys.from_seed(bytearray(seed.strip().encode()))


def public_key(seed: str) -> str:
    return str(key_pair(seed).public_key.decode())


def operator_jwt(operator_seed: str, name: str, system_account: str) -> str:
    """The operator's own JWT (self-signed): the server's root of trust."""
    operator = public_key(operator_seed)
    nats = {"type": "operator", "version": 2, "system_account": system_account}
    return encode(operator_seed, operator, name, nats)


def account_jwt(
    operator_seed: str,
    account_seed: str,
    name: str,
    *,
    jetstream: bool,
    revoked: Mapping[str, int] | None = None,
    issued_at: int | None = None,
) -> str:
    """An account's JWT, signed by the operator; ``revoked`` user keys (-> unix time) cannot
    connect with a JWT issued at or before that time."""
    limits = {**ACCOUNT_LIMITS, **(JETSTREAM_LIMITS if jetstream else {})}
    nats: dict[str, Any] = {"type": "account", "version": 2, "limits": limits}
    if revoked:
        nats["revocations"] = dict(sorted(revoked.items()))
    return encode(operator_seed, public_key(account_seed), name, nats, issued_at)


def user_jwt(
    account_seed: str, user: str, name: str, permissions: Mapping[str, Any] | None = None
) -> str:
    """A user's JWT, signed by its account; no ``permissions``: all of the account."""
    nats = {"type": "user", "version": 2, **USER_LIMITS, **(permissions or {})}
    return encode(account_seed, user, name, nats)


def encode(
    issuer_seed: str, subject: str, name: str, nats: Mapping[str, Any], issued_at: int | None = None
) -> str:
    issuer = key_pair(issuer_seed)
    claims: dict[str, Any] = {
        "jti": "",
        "iat": int(time.time()) if issued_at is None else issued_at,
        "iss": issuer.public_key.decode(),
        "name": name,
        "sub": subject,
        "nats": dict(nats),
    }
    claims["jti"] = _claims_id(claims)
    signed = f"{_b64(_HEADER)}.{_b64(claims)}"
    signature = issuer.sign(signed.encode())
    return f"{signed}.{_unpadded(signature)}"


def decode(token: str) -> dict[str, Any]:
    """The claims of a JWT whose signature is its issuer's; Invalid otherwise."""
    try:
        header, claims, signature = token.strip().split(".")
        payload: dict[str, Any] = json.loads(_unb64(claims))
        _verify_key(payload["iss"]).verify(f"{header}.{claims}".encode(), _unb64(signature))
    except (ValueError, KeyError, TypeError, nacl.exceptions.BadSignatureError) as exc:
        raise Invalid(f"not a NATS JWT signed by its issuer: {exc!r}") from exc
    return payload


def creds(jwt: str, user_seed: str) -> str:
    """The standard ``.creds`` text: what every NATS client and tool reads."""
    return (
        "-----BEGIN NATS USER JWT-----\n"
        f"{jwt}\n"
        "------END NATS USER JWT------\n\n"
        "************************* IMPORTANT *************************\n"
        "NKEY Seed printed below can be used to sign and prove identity.\n"
        "NKEYs are sensitive and should be treated as secrets.\n\n"
        "-----BEGIN USER NKEY SEED-----\n"
        f"{user_seed}\n"
        "------END USER NKEY SEED------\n\n"
        "*************************************************************\n"
    )


def parse_creds(text: str) -> tuple[str, str]:
    """(user JWT, user seed) of a ``.creds`` text; Invalid for anything else."""
    found = _CREDS.search(text)
    if found is None:
        raise Invalid("these are not NATS credentials (a .creds file's user JWT and seed)")
    try:
        public_key(found["seed"])
    except nkeys.NkeysError as exc:
        raise Invalid(f"the credentials' seed is not a user nkey: {exc}") from exc
    return found["jwt"], found["seed"]


def _verify_key(public: str) -> nacl.signing.VerifyKey:
    """An nkey's public key is base32 of (role byte, ed25519 key, CRC16)."""
    raw = base64.b32decode(public + "=" * (-len(public) % 8))
    if len(raw) != 35 or nkeys.crc16_checksum(raw[:33]) != raw[33:]:
        raise ValueError(f"not an nkey public key: {public!r}")
    return nacl.signing.VerifyKey(raw[1:33])


def _claims_id(claims: Mapping[str, Any]) -> str:
    digest = hashlib.new("sha512_256", _json(claims)).digest()
    return base64.b32encode(digest).decode().rstrip("=")


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _b64(value: Any) -> str:
    return _unpadded(_json(value))


def _unpadded(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
