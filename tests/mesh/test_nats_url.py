"""Broker URLs: what is taken, and the plain message for what is not (never with a secret)."""

from __future__ import annotations

import pytest

from parley.broker.nats_url import NatsAddress, parse_nats_url
from parley.errors import Invalid


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("nats://broker", NatsAddress(("nats://broker:4222",))),
        ("nats://10.0.0.2:4333", NatsAddress(("nats://10.0.0.2:4333",))),
        ("tls://broker.lan", NatsAddress(("tls://broker.lan:4222",))),
        ("nats://hub:p%40ss@broker", NatsAddress(("nats://broker:4222",), "hub", "p@ss")),
        ("nats://s3cret@broker:4222", NatsAddress(("nats://broker:4222",), token="s3cret")),
        ("nats://[::1]:4222", NatsAddress(("nats://[::1]:4222",))),
        ("nats://a:1, nats://b:2", NatsAddress(("nats://a:1", "nats://b:2"))),
    ],
)
def test_a_broker_url_is_read(url: str, address: NatsAddress) -> None:
    assert parse_nats_url(url) == address


def test_tls_is_the_url_s_to_ask() -> None:
    assert parse_nats_url("tls://broker").tls
    assert not parse_nats_url("nats://broker").tls


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("broker:4222", "needs a scheme"),
        ("http://broker", "must start with nats:// or tls://, not 'http://'"),
        ("nats://", "names no host"),
        ("nats://broker:port", "bad port"),
        ("nats://broker:99999", "bad port"),
        ("nats://broker/x", "path or query"),
        ("nats://a, tls://b", "mixes"),
        ("nats://u:p@a, nats://a", "different credentials"),
        ("nats://a,,nats://b", "empty"),
    ],
)
def test_a_bad_broker_url_is_refused_plainly(url: str, message: str) -> None:
    with pytest.raises(Invalid, match=message):
        parse_nats_url(url)


def test_a_refused_url_does_not_repeat_its_password() -> None:
    with pytest.raises(Invalid) as refused:
        parse_nats_url("nats://hub:s3cret@broker:port")
    assert "s3cret" not in refused.value.message
    assert "nats://broker:port" in refused.value.message


def test_the_shown_address_has_no_credentials() -> None:
    assert parse_nats_url("tls://hub:s3cret@broker:4333").shown == "tls://broker:4333"
