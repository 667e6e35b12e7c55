"""Parley's HTTP clients share one TLS context, read once: it still verifies certificates and
host names as httpx's default does, from the same CAs."""

from __future__ import annotations

import ssl

import httpx

from parley.tls import trusted


def test_one_context_shared_that_verifies_as_httpx_default_does() -> None:
    shared, default = trusted(), httpx.create_ssl_context()
    assert trusted() is shared
    assert shared.verify_mode == ssl.CERT_REQUIRED and shared.check_hostname
    assert shared.verify_mode == default.verify_mode
    assert shared.cert_store_stats() == default.cert_store_stats()  # the same CAs
