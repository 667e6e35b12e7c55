"""STAND-IN written by the node-creds helper so that its code runs and is tested before the
broker-keys helper's module lands: the same interface (MESH.md), minimal. The integrator keeps
broker-keys' version of this file whole.

The mesh's broker credentials: NATS decentralised JWTs (operator → accounts → users)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass

import nkeys

from parley.datafolder import DataFolder, write_secret
from parley.mesh.nats_url import parse_nats_url

STREAM = "PARLEY_DURABLE"


@dataclass(frozen=True)
class IssuedNode:
    public_key: str
    creds: str  # the .creds file's text


def _new_seed(prefix: int) -> str:
    return str(nkeys.encode_seed(os.urandom(32), prefix).decode())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(issuer: nkeys.KeyPair, subject: str, name: str, nats: dict[str, object]) -> str:
    header = {"typ": "JWT", "alg": "ed25519-nkey"}
    claims = {
        "jti": _b64(os.urandom(16)),
        "iat": int(time.time()),
        "iss": issuer.public_key.decode(),
        "name": name,
        "sub": subject,
        "nats": nats,
    }
    signing = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
    return f"{signing}.{_b64(issuer.sign(signing.encode()))}"


def _creds(jwt: str, seed: str) -> str:
    return (
        f"-----BEGIN NATS USER JWT-----\n{jwt}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
    )


class BrokerKeys:
    def __init__(self, account_seed: str) -> None:
        self._account = nkeys.from_seed(account_seed.encode())

    @classmethod
    def load_or_create(cls, folder: DataFolder) -> BrokerKeys:
        found = cls.load(folder)
        if found is not None:
            return found
        folder.create()
        write_secret(folder.private / "broker-account.nk", _new_seed(nkeys.PREFIX_BYTE_ACCOUNT))
        loaded = cls.load(folder)
        assert loaded is not None
        return loaded

    @classmethod
    def load(cls, folder: DataFolder) -> BrokerKeys | None:
        path = folder.private / "broker-account.nk"
        return cls(path.read_text().strip()) if path.exists() else None

    def _user(self, name: str, nats: dict[str, object]) -> tuple[str, str]:
        seed = _new_seed(nkeys.PREFIX_BYTE_USER)
        public = nkeys.from_seed(seed.encode()).public_key.decode()
        return public, _creds(_jwt(self._account, public, name, nats), seed)

    def hub_creds(self) -> str:
        return self._user("hub", {"type": "user", "version": 2})[1]

    def system_creds(self) -> str:
        return self._user("system", {"type": "user", "version": 2})[1]

    def issue_node(self, node: str, stream: str = STREAM) -> IssuedNode:
        public, creds = self._user(node, {"type": "user", "version": 2})
        return IssuedNode(public, creds)

    def account_jwt(self, revoked: Mapping[str, int]) -> str:
        account = self._account.public_key.decode()
        nats = {"type": "account", "version": 2, "revocations": dict(revoked)}
        return _jwt(self._account, account, "PARLEY", nats)


def node_inbox_prefix(node: str) -> str:
    return f"_INBOX_{node}"


async def push_revocations(broker_url: str, keys: BrokerKeys, revoked: Mapping[str, int]) -> None:
    raise NotImplementedError("stand-in: broker-keys' push_revocations replaces this")


async def lets_anyone_in(url: str, timeout: float) -> bool:
    """Whether the broker's greeting (INFO) says it lets a client in without credentials;
    False if it cannot be reached (connecting then says why)."""
    address = parse_nats_url(url)
    host, _, port = address.servers[0].rsplit("://", 1)[-1].rpartition(":")
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout)
    except (OSError, TimeoutError):
        return False
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
    info = json.loads(line.decode().removeprefix("INFO ")) if line.startswith(b"INFO ") else {}
    return not info.get("auth_required", False)
