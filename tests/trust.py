"""One TLS context for every httpx client a test process makes with httpx's default trust.

httpx reads the CAs again for each client it makes (some 30 ms of CPU), and the suite makes
thousands: each ``httpx.get`` of a test, each poll of a starting server's /healthz, each bot a
chat library makes. Sampled over a whole run, reading them was the largest single cost of the
test workers. Parley's own clients share one context already (``parley/tls.py``); this gives
the suite's, and the libraries' it drives, the same: the default context made once per process
(and per ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``, which a test may set), shared as an
``ssl.SSLContext`` may be. A client given its own ``verify`` or ``cert`` is left as it was.

It wraps the name httpx's transports call (``httpx._transports.default.create_ssl_context``);
should a release of httpx move it, nothing is wrapped and the suite is only slower, which
``tests/test_tls.py`` then says. ``without_shared_trust`` undoes it for a test that checks
what Parley shares itself; ``cas_read`` lists each reading of CAs a test's code makes.
"""

from __future__ import annotations

import contextlib
import functools
import os
import ssl
from collections.abc import Iterator
from typing import Any

import pytest
from httpx._transports import default as transports

_ENVIRONMENT = ("SSL_CERT_FILE", "SSL_CERT_DIR")
_NAME = "create_ssl_context"  # what httpx's transports call, in their module's namespace


def share_default_trust() -> None:
    made = getattr(transports, _NAME, None)
    if made is None or getattr(made, "shares_default_trust", False):
        return

    @functools.cache
    def default(environment: tuple[str | None, ...]) -> ssl.SSLContext:
        context: ssl.SSLContext = made()
        return context

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        if verify is True and cert is None and trust_env:
            return default(tuple(os.environ.get(name) for name in _ENVIRONMENT))
        return made(verify=verify, cert=cert, trust_env=trust_env)

    create_ssl_context.shares_default_trust = True  # type: ignore[attr-defined]
    create_ssl_context.wrapped = made  # type: ignore[attr-defined]
    setattr(transports, _NAME, create_ssl_context)


@contextlib.contextmanager
def without_shared_trust() -> Iterator[None]:
    """httpx's own default for the time: each client reads the CAs, unless given a context."""
    shared = getattr(transports, _NAME)
    setattr(transports, _NAME, getattr(shared, "wrapped", shared))
    try:
        yield
    finally:
        setattr(transports, _NAME, shared)


def cas_read(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """From now on in the test, the arguments of each default context made (each reading of the
    CAs), in order."""
    made: list[object] = []
    original = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        made.append(args or kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    return made
