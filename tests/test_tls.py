"""Parley's HTTP clients share one TLS context, read once: it still verifies certificates and
host names as httpx's default does, from the same CAs."""

from __future__ import annotations

import shutil
import ssl
from pathlib import Path

import certifi
import httpx
import pytest

from parley.a2a.pushes import PushSender
from parley.errors import Unavailable
from parley.federation.peer_client import PeerClient
from parley.tls import trusted
from tests.trust import cas_read


def test_one_context_shared_that_verifies_as_httpx_default_does() -> None:
    shared, default = trusted(), httpx.create_ssl_context()
    assert trusted() is shared
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.verify_mode == default.verify_mode
    assert shared.cert_store_stats() == default.cert_store_stats()  # the same CAs


async def test_a_client_reads_the_cas_at_its_first_request_not_before() -> None:
    """The peer client and the push sender are made at every start; what they send through is
    made, and the CAs read, when they first send (here to a port nothing listens on)."""
    trusted.cache_clear()
    peers, pushes = PeerClient(), PushSender(allowed_hosts=["127.0.0.1"])
    assert trusted.cache_info().currsize == 0
    await pushes.close()  # closing one that never sent is nothing to do
    with pytest.raises(Unavailable):
        await peers.handshake("http://127.0.0.1:9", "secret", "http://127.0.0.1:8", "token")
    assert trusted.cache_info().currsize == 1
    await peers.close()


def test_the_suite_s_clients_share_httpx_default_trust_read_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """tests/trust.py: a test process reads the default CAs once, not at every client it makes
    (fails when an httpx release moves what it wraps); a client's own trust is still its own."""
    httpx.Client().close()  # the shared context made, if no test made it yet
    made = cas_read(monkeypatch)
    for _ in range(3):
        httpx.Client().close()
    assert made == []
    own = ssl.create_default_context()
    assert len(made) == 1
    with httpx.Client(verify=own):  # given its own: nothing read for it, nothing shared
        assert len(made) == 1
    other = tmp_path / "cas.pem"
    shutil.copyfile(certifi.where(), other)
    monkeypatch.setenv("SSL_CERT_FILE", str(other))  # another trust: read for it, once
    httpx.Client().close()
    httpx.Client().close()
    assert made == [made[0], {"cafile": str(other)}]
