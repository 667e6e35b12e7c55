"""The broker's keys and the JWTs signed with them, read back as nats-server reads them."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from parley.broker import nats_jwt
from parley.datafolder import DataFolder
from parley.errors import Invalid
from parley.mesh.broker_auth import (
    CONFIGURED_AT,
    STREAM,
    BrokerKeys,
    keys_folder,
    node_inbox_prefix,
    node_permissions,
)
from parley.mesh.broker_config import TlsFiles, check_listen, write_server_config


@pytest.fixture
def keys(tmp_path: Path) -> BrokerKeys:
    return BrokerKeys.load_or_create(DataFolder(tmp_path / "hub"))


def test_keys_are_made_once_and_kept_private(tmp_path: Path, keys: BrokerKeys) -> None:
    folder = DataFolder(tmp_path / "hub")
    assert BrokerKeys.load(folder) == keys
    assert BrokerKeys.load_or_create(folder) == keys  # the same operator: nodes stay valid
    place = keys_folder(folder)
    assert stat.S_IMODE(place.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in place.iterdir()} == {0o600}
    assert keys.operator_seed not in repr(keys)


def test_no_keys_before_broker_config(tmp_path: Path) -> None:
    assert BrokerKeys.load(DataFolder(tmp_path / "hub")) is None


def test_the_chain_of_trust(keys: BrokerKeys) -> None:
    operator = nats_jwt.decode(keys.operator_jwt())
    assert operator["iss"] == operator["sub"] == keys.operator
    assert operator["nats"]["system_account"] == keys.system_account
    account = nats_jwt.decode(keys.account_jwt({}))
    assert (account["iss"], account["sub"]) == (keys.operator, keys.account)
    assert account["nats"]["limits"]["disk_storage"] == -1  # JetStream on: the hub's stream
    system = nats_jwt.decode(keys.system_account_jwt())
    assert (system["iss"], system["sub"]) == (keys.operator, keys.system_account)
    assert "disk_storage" not in system["nats"]["limits"]
    hub_jwt, hub_seed = nats_jwt.parse_creds(keys.hub_creds())
    hub = nats_jwt.decode(hub_jwt)
    assert (hub["iss"], hub["sub"]) == (keys.account, nats_jwt.public_key(hub_seed))
    assert "pub" not in hub["nats"] and "sub" not in hub["nats"]  # all of the account
    system_user, _ = nats_jwt.parse_creds(keys.system_creds())
    assert nats_jwt.decode(system_user)["iss"] == keys.system_account


def test_a_node_gets_its_own_subjects_and_a_fresh_key_each_time(keys: BrokerKeys) -> None:
    first, second = keys.issue_node("gpu1"), keys.issue_node("gpu1")
    assert first.public_key != second.public_key and first.public_key.startswith("U")
    jwt, seed = nats_jwt.parse_creds(first.creds)
    claims = nats_jwt.decode(jwt)
    assert (claims["iss"], claims["sub"]) == (keys.account, first.public_key)
    assert nats_jwt.public_key(seed) == first.public_key
    assert claims["nats"]["pub"]["allow"] == [
        "parley.mesh.register.gpu1",
        "parley.mesh.heartbeat.gpu1",
        "parley.hub.run-events.gpu1",
        f"{STREAM}.parley.hub.run-outcomes.gpu1",
    ]
    assert claims["nats"]["sub"]["allow"] == ["parley.node.gpu1.>", "_INBOX_gpu1.>"]
    assert claims["nats"]["resp"]["max"] == 1  # it may answer the requests it got
    assert node_inbox_prefix("gpu1") == "_INBOX_gpu1"
    assert node_permissions("gpu1", "OTHER")["pub"]["allow"][-1].startswith("OTHER.")


@pytest.mark.parametrize("name", ["gpu1.>", "*", ">", "a b", "GPU", "gpu1.turn", ""])
def test_a_name_that_could_widen_a_subject_is_refused(keys: BrokerKeys, name: str) -> None:
    with pytest.raises(Invalid):
        keys.issue_node(name)
    with pytest.raises(Invalid):
        node_inbox_prefix(name)


def test_revocations_are_in_the_account_and_newer_than_the_configured_one(
    keys: BrokerKeys,
) -> None:
    revoked = nats_jwt.decode(keys.account_jwt({"UABC": 1700000000}))
    assert revoked["nats"]["revocations"] == {"UABC": 1700000000}
    configured = nats_jwt.decode(keys.configured_account_jwt())
    assert configured["iat"] == CONFIGURED_AT < revoked["iat"]
    assert "revocations" not in configured["nats"]


def test_a_tampered_jwt_is_not_read(keys: BrokerKeys) -> None:
    header, _, signature = keys.account_jwt({}).split(".")
    other = keys.issue_node("gpu1")
    other_claims = nats_jwt.parse_creds(other.creds)[0].split(".")[1]
    with pytest.raises(Invalid):
        nats_jwt.decode(f"{header}.{other_claims}.{signature}")


@pytest.mark.parametrize("text", ["", "nonsense", "-----BEGIN NATS USER JWT-----\nabc\n"])
def test_what_is_not_a_creds_file_is_refused(text: str) -> None:
    with pytest.raises(Invalid, match="not NATS credentials"):
        nats_jwt.parse_creds(text)


@pytest.mark.parametrize("listen", ["foo", "host:", ":4222", "host:0", "host:70000", "h:x"])
def test_a_bad_listen_address_is_refused(listen: str) -> None:
    with pytest.raises(Invalid, match="HOST:PORT"):
        check_listen(listen)


def test_the_configuration_s_tls_and_stores(tmp_path: Path, keys: BrokerKeys) -> None:
    for name in ("c.pem", "k.pem", "ca.pem"):
        (tmp_path / name).write_text("x")
    tls = TlsFiles(tmp_path / "c.pem", tmp_path / "k.pem", tmp_path / "ca.pem").check()
    text = write_server_config(
        keys, tmp_path / "out", listen="[::]:4333", tls=tls, jetstream_dir=tmp_path / "js"
    ).read_text()
    assert 'listen: "[::]:4333"' in text
    assert f'store_dir: "{tmp_path / "js"}"' in text
    assert f'dir: "{tmp_path / "out" / "jwt"}"' in text
    assert f'cert_file: "{tmp_path / "c.pem"}"' in text and "verify: true" in text
    with pytest.raises(Invalid, match="does not exist"):
        TlsFiles(tmp_path / "c.pem", tmp_path / "missing.pem").check()


def test_the_stream_credentials_name_is_the_durable_stream() -> None:
    """broker_auth writes the stream's name again, to load no NATS client: the same name."""
    from parley.broker import nats_durable
    from parley.mesh import broker_auth

    assert broker_auth.STREAM == nats_durable.STREAM
