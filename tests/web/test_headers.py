"""Every answer carries the headers that keep a page from being framed or sniffed (a policy of
scripts and styles from Parley only), and failed sign-ins and unknown tokens are limited per
address: past a burst of failures the address is refused, 429 with Retry-After, whatever it
sends, until it has earned a try back; an address that does not fail is never limited."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from parley.settings import Settings
from tests.support import Harness, ManualClock, bearer, started
from tests.web.support import ORIGIN, signed_in

FRAMING = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def _guarded(answer: httpx.Response) -> None:
    for name, value in FRAMING.items():
        assert answer.headers.get(name) == value, (answer.url, name, answer.headers)
    policy = answer.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in policy, answer.url
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]


async def test_every_answer_carries_the_headers_against_framing_and_sniffing(
    parley: Harness,
) -> None:
    await parley.hire("bob")
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as anonymous:
        answers = [
            await anonymous.get("/signin"),
            await anonymous.get("/"),  # a redirect to the sign-in page
            await anonymous.get("/static/parley.js"),
            await anonymous.get("/healthz"),
            await anonymous.get("/api/v1/agents"),  # refused by the guard, before any route
            await anonymous.get("/docs"),
        ]
    async with signed_in(parley) as browser:
        answers += [
            await browser.get("/"),
            await browser.get("/chat/bob"),
            await browser.get("/tasks/987654"),  # an error page
            await browser.post("/chat/bob", {"text": "hi"}),
        ]
    answers += [await parley.owner.get("/api/v1/agents"), await parley.owner.get("/nothing")]
    for answer in answers:
        _guarded(answer)
    docs = answers[5].headers["content-security-policy"]
    assert "script-src 'self' 'sha256-" in docs  # Swagger UI's own starter, by its hash only


@pytest.fixture
async def strict(settings: Settings, clock: ManualClock) -> AsyncIterator[Harness]:
    """Parley whose addresses may fail 3 times in a row, and earn a try back every 2 s."""
    limited = settings.model_copy(update={"auth_failure_burst": 3, "auth_failures_per_minute": 30})
    async with started(limited, clock) as harness:
        yield harness


@asynccontextmanager
async def from_address(parley: Harness, address: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=parley.transport.app, client=(address, 4711))
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as client:
        yield client


async def test_bad_tokens_from_one_address_are_refused_past_a_burst_and_only_there(
    strict: Harness,
) -> None:
    owner = strict.owner.headers["authorization"]
    async with (
        from_address(strict, "10.0.0.7") as guesser,
        from_address(strict, "10.0.0.8") as neighbour,
    ):
        for guess in range(3):
            refused = await guesser.get("/api/v1/me", headers=bearer(f"pk_guess{guess}"))
            assert refused.status_code == 401, refused.text
        throttled = await guesser.get("/api/v1/me", headers=bearer("pk_guess3"))
        assert throttled.status_code == 429
        assert throttled.json()["error"] == "throttled"
        assert throttled.headers["retry-after"] == "2"
        # Whatever it sends now: its guesses are not even looked at.
        still = await guesser.get("/api/v1/me", headers={"Authorization": owner})
        assert still.status_code == 429
        elsewhere = await neighbour.get("/api/v1/me", headers={"Authorization": owner})
        assert elsewhere.status_code == 200
        strict.clock.advance(seconds=2)  # one try earned back
        assert (await guesser.get("/api/v1/me", headers={"Authorization": owner})).is_success


async def test_an_address_that_does_not_fail_is_never_limited(strict: Harness) -> None:
    async with from_address(strict, "10.0.0.9") as busy:
        for _ in range(50):
            answer = await busy.get("/api/v1/agents", headers=strict.owner.headers)
            assert answer.status_code == 200


async def test_failed_sign_ins_are_limited_per_address_with_the_form_again(
    strict: Harness,
) -> None:
    async with from_address(strict, "10.0.0.7") as guesser:
        for guess in range(3):
            answer = await guesser.post("/signin", data={"token": f"pk_guess{guess}"})
            assert answer.status_code == 401
        throttled = await guesser.post("/signin", data={"token": "pk_guess3"})
        assert throttled.status_code == 429 and throttled.headers["retry-after"] == "2"
        assert "Too many tries that failed" in throttled.text
        assert 'action="/signin"' in throttled.text  # the form, to try again later
        # The page's and the API's failures are one count per address.
        api = await guesser.get("/api/v1/me", headers=bearer("pk_guess4"))
        assert api.status_code == 429
