"""Who may use the mesh's broker: keys made once on the hub's machine, credentials signed with
them, revocation pushed to the running server.

NATS's decentralised model: an **operator** key signs two accounts, the server's **system**
account and **PARLEY**, the mesh's; the PARLEY account key signs users — the hub (all of the
account) and one per node (only that node's subjects, ``node_permissions``). The server trusts
the operator's JWT (``broker_config``) and learns every account's JWT, so no user is ever
configured on its machine: a node's credentials are made where the keys are and carried to the
node. Revoking re-signs the PARLEY account with the user's key in its ``revocations`` and
pushes it to the server over the system account, which drops that user at once.

The keys live in the hub's data folder, ``private/broker/`` (0700, files 0600)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parley.broker import nats_jwt
from parley.datafolder import PRIVATE_MODE, DataFolder, write_secret
from parley.errors import Invalid, Unavailable
from parley.naming import check_name
from parley.node.messages import (
    heartbeat_subject,
    register_subject,
    run_events_subject,
    run_outcomes_subject,
)

# Where JetStream stores a node's ends: nats_durable.STREAM, written again here so that reading
# keys and issuing credentials (every hub's start) loads no NATS client; a test keeps them equal.
STREAM = "PARLEY_DURABLE"
NODE_USER = "node "  # a node's user is named "node NAME" in its JWT
OPERATOR_NAME, SYSTEM_ACCOUNT_NAME, ACCOUNT_NAME = "parley", "SYS", "PARLEY"
# The JWTs the server is configured with are dated at the start of time, so that any account
# JWT pushed since (a revocation) is newer: the server keeps the newest of both, and writing
# the configuration again never brings a revoked node back.
CONFIGURED_AT = 1
CLAIMS_UPDATE = "$SYS.REQ.CLAIMS.UPDATE"
UPDATE_TIMEOUT = 5.0  # seconds for the server to take a pushed account JWT

_FILES = {  # field -> file
    "operator_seed": "operator.nk",
    "system_account_seed": "system-account.nk",
    "account_seed": "parley-account.nk",
    "hub": "hub.creds",
    "system_user": "system-user.creds",
}


@dataclass(frozen=True)
class IssuedNode:
    public_key: str  # the node user's nkey public key ("U...")
    creds: str  # standard NATS .creds text (JWT + seed blocks)


@dataclass(frozen=True)
class BrokerKeys:
    operator_seed: str
    system_account_seed: str
    account_seed: str
    hub: str  # the hub user's .creds text
    system_user: str  # the system user's .creds text

    def __repr__(self) -> str:  # never a seed in a log or a traceback
        return f"BrokerKeys(operator={self.operator})"

    @classmethod
    def load_or_create(cls, folder: DataFolder) -> BrokerKeys:
        """The data folder's keys, made the first time. Made whole or not at all: they are
        written to a folder of their own, renamed into place once complete."""
        if (keys := cls.load(folder)) is not None:
            return keys
        folder.create()
        made = _create()
        partial = folder.private / f".broker.{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(mode=PRIVATE_MODE)
        for field, name in _FILES.items():
            write_secret(partial / name, getattr(made, field).strip())
        try:
            partial.rename(keys_folder(folder))
        except OSError:  # another process made them meanwhile: theirs are the keys
            shutil.rmtree(partial, ignore_errors=True)
        keys = cls.load(folder)
        assert keys is not None
        return keys

    @classmethod
    def load(cls, folder: DataFolder) -> BrokerKeys | None:
        """None when ``parley mesh broker-config`` never ran on this data folder."""
        place = keys_folder(folder)
        if not place.is_dir():
            return None
        try:
            texts = {field: (place / name).read_text() for field, name in _FILES.items()}
        except OSError as exc:
            raise Unavailable(f"cannot read the broker's keys in {place}: {exc.strerror}") from exc
        return cls(**{field: _tidy(text) for field, text in texts.items()})

    @property
    def operator(self) -> str:
        return nats_jwt.public_key(self.operator_seed)

    @property
    def system_account(self) -> str:
        return nats_jwt.public_key(self.system_account_seed)

    @property
    def account(self) -> str:
        """The PARLEY account's public key."""
        return nats_jwt.public_key(self.account_seed)

    def hub_creds(self) -> str:
        """All of the PARLEY account (publish and subscribe ``>``)."""
        return self.hub

    def system_creds(self) -> str:
        """A user of the system account: it pushes account JWTs (revocations)."""
        return self.system_user

    def issue_node(self, node: str, stream: str = STREAM) -> IssuedNode:
        """Credentials for ``node``: a fresh user key at each call."""
        permissions = node_permissions(node, stream)
        seed = nats_jwt.new_seed("user")
        user = nats_jwt.public_key(seed)
        jwt = nats_jwt.user_jwt(self.account_seed, user, f"{NODE_USER}{node}", permissions)
        return IssuedNode(user, nats_jwt.creds(jwt, seed))

    def operator_jwt(self) -> str:
        return nats_jwt.operator_jwt(self.operator_seed, OPERATOR_NAME, self.system_account)

    def system_account_jwt(self) -> str:
        return nats_jwt.account_jwt(
            self.operator_seed,
            self.system_account_seed,
            SYSTEM_ACCOUNT_NAME,
            jetstream=False,
            issued_at=CONFIGURED_AT,
        )

    def configured_account_jwt(self) -> str:
        """The PARLEY account as the server's configuration gives it: no revocation, and
        older than any pushed since."""
        return self.account_jwt({}, issued_at=CONFIGURED_AT)

    def account_jwt(self, revoked: Mapping[str, int], issued_at: int | None = None) -> str:
        """The PARLEY account's JWT, with JetStream; ``revoked``: user public key -> unix time
        (that user's credentials issued up to then are refused)."""
        return nats_jwt.account_jwt(
            self.operator_seed,
            self.account_seed,
            ACCOUNT_NAME,
            jetstream=True,
            revoked=revoked,
            issued_at=issued_at,
        )


def node_inbox_prefix(node: str) -> str:
    """Where a node's requests get their replies: its own, so no other node can read them."""
    return f"_INBOX_{check_name('node', node)}"


def node_permissions(node: str, stream: str = STREAM) -> dict[str, Any]:
    """A node's user: its own registration, heartbeats, reply chunks and ends (stored durably
    as ``<stream>.<subject>``), answers to requests it got; it hears only its own subjects."""
    check_name("node", node)
    return {
        "pub": {
            "allow": [
                register_subject(node),
                heartbeat_subject(node),
                run_events_subject(node),
                f"{stream}.{run_outcomes_subject(node)}",
            ]
        },
        "sub": {"allow": [f"parley.node.{node}.>", f"{node_inbox_prefix(node)}.>"]},
        "resp": {"max": 1, "ttl": 0},
    }


async def push_revocations(broker_url: str, keys: BrokerKeys, revoked: Mapping[str, int]) -> None:
    """Give the running server the PARLEY account re-signed with ``revoked``: it drops those
    users' connections and refuses them from then on. Unavailable when it cannot be done."""
    from parley.broker.nats_broker import NatsBroker

    broker = await NatsBroker.connect(
        broker_url, credentials=keys.system_creds(), prepare_stream=False
    )
    try:
        account_jwt = keys.account_jwt(revoked)
        answer = await broker.request(CLAIMS_UPDATE, account_jwt.encode(), UPDATE_TIMEOUT)
    finally:
        await broker.close()
    _check_update(answer)


def _check_update(answer: bytes) -> None:
    with contextlib.suppress(ValueError):
        reply = json.loads(answer)
        data = reply.get("data") if isinstance(reply, dict) else None
        if isinstance(data, dict) and data.get("code") == 200:
            return
        if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
            why = reply["error"].get("description", "no reason given")
            raise Unavailable(f"the broker refused the mesh account's update: {why}")
    raise Unavailable(f"the broker answered the mesh account's update with {answer[:200]!r}")


def _tidy(text: str) -> str:
    """A seed alone on its line; a ``.creds`` text as read."""
    return text.strip() if text.startswith("S") else text.strip() + "\n"


def keys_folder(folder: DataFolder) -> Path:
    """Where the broker's keys and the hub's credentials are (private/broker/)."""
    return folder.private / "broker"


def _create() -> BrokerKeys:
    operator = nats_jwt.new_seed("operator")
    system_account = nats_jwt.new_seed("account")
    account = nats_jwt.new_seed("account")
    return BrokerKeys(
        operator_seed=operator,
        system_account_seed=system_account,
        account_seed=account,
        hub=_user_creds(account, "hub"),
        system_user=_user_creds(system_account, "system"),
    )


def _user_creds(account_seed: str, name: str) -> str:
    seed = nats_jwt.new_seed("user")
    jwt = nats_jwt.user_jwt(account_seed, nats_jwt.public_key(seed), name)
    return nats_jwt.creds(jwt, seed)


def node_named_in(creds: str) -> str | None:
    """The node a ``.creds`` text was issued for, as its JWT names it (None: not a node's, or
    not readable): a node checks it holds its own before it tries the broker, which would only
    deny its publishes (the hub would never hear it)."""
    try:
        jwt, _ = nats_jwt.parse_creds(creds)
        name = nats_jwt.decode(jwt).get("name")
    except Invalid:
        return None
    if not isinstance(name, str) or not name.startswith(NODE_USER):
        return None
    return name.removeprefix(NODE_USER)
