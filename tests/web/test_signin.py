"""Signing in to the page: a token in a posted form for a signed, HttpOnly, SameSite=Strict
cookie; no page without it; forms refused without their token or from another site."""

from __future__ import annotations

import httpx

from tests.support import Harness
from tests.web.support import ORIGIN, signed_in


async def test_a_page_without_a_sign_in_goes_to_the_sign_in_page(parley: Harness) -> None:
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as anonymous:
        answer = await anonymous.get("/chat/bob?at=1")
        form = await anonymous.get("/signin")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/signin?then=/chat/bob%3Fat%3D1"
    assert form.status_code == 200
    assert 'method="post" action="/signin"' in form.text
    assert 'type="password"' in form.text


async def test_signing_in_sets_a_strict_http_only_cookie(parley: Harness) -> None:
    token = (parley.context.settings.data_dir / "private" / "owner-token").read_text().strip()
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        answer = await client.post("/signin", data={"token": token, "then": "/chat/x"})
        page = await client.get("/")
    assert answer.status_code == 303 and answer.headers["location"] == "/chat/x"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=" in cookie
    assert token not in cookie  # the cookie names the token's hash, signed
    assert page.status_code == 200 and "owner (owner)" in page.text


async def test_a_wrong_token_is_refused_with_the_form_again(parley: Harness) -> None:
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        answer = await client.post("/signin", data={"token": "pt_not-a-token"})
        after = await client.get("/")
    assert answer.status_code == 401
    assert "That token is not known here" in answer.text
    assert "set-cookie" not in answer.headers
    assert after.status_code == 303


async def test_sign_in_goes_back_only_to_a_path_of_this_page(parley: Harness) -> None:
    token = (parley.context.settings.data_dir / "private" / "owner-token").read_text().strip()
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        for elsewhere in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
            answer = await client.post("/signin", data={"token": token, "then": elsewhere})
            assert answer.headers["location"] == "/", elsewhere


async def test_a_forged_or_tampered_cookie_is_no_sign_in(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        real = browser.http.cookies["parley_session"]
    # The signature's first character changed: its last one holds spare bits, so "…xx" for a
    # real "…xw" decoded to the very same signature (one cookie in ~1000; a fresh clone met it).
    payload, _, signature = real.rpartition(".")
    tampered = f"{payload}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        for cookie in (tampered, "made-up", real + "."):
            client.cookies.set("parley_session", cookie)
            assert (await client.get("/")).status_code == 303


async def test_reissuing_the_token_ends_the_sign_in(parley: Harness) -> None:
    token = await parley.add_person("ann")
    async with signed_in(parley, token) as browser:
        assert (await browser.get("/")).status_code == 200
        reissued = await parley.owner.post("/api/v1/people/ann/token")
        assert reissued.status_code == 200
        assert (await browser.get("/")).status_code == 303


async def test_a_form_without_its_token_or_from_another_site_is_refused(parley: Harness) -> None:
    await parley.hire("bob")
    async with signed_in(parley) as browser:
        no_token = await browser.http.post(
            "/chat/bob", data={"text": "hi"}, headers={"Origin": ORIGIN}
        )
        wrong = await browser.http.post(
            "/chat/bob", data={"text": "hi", "form_token": "0" * 40}, headers={"Origin": ORIGIN}
        )
        elsewhere = await browser.http.post(
            "/chat/bob",
            data={"text": "hi", "form_token": browser.form_token},
            headers={"Origin": "https://evil.example"},
        )
        as_json = await browser.http.post(
            "/chat/bob", json={"text": "hi", "form_token": browser.form_token}
        )
    assert [no_token.status_code, wrong.status_code, elsewhere.status_code] == [403, 403, 403]
    assert as_json.status_code == 400 and "x-www-form-urlencoded" in as_json.text
    assert "form token" in no_token.text and "another site" in elsewhere.text
    conversations = await parley.owner.get("/api/v1/conversations")
    assert conversations.json()["items"] == []  # nothing was said


async def test_signing_out_ends_the_cookie(parley: Harness) -> None:
    async with signed_in(parley) as browser:
        answer = await browser.post("/signout")
        assert answer.status_code == 303
        assert (await browser.get("/")).status_code == 303


async def test_signing_out_ends_the_sign_in_wherever_its_cookie_was_copied(
    parley: Harness,
) -> None:
    async with signed_in(parley) as browser:
        copied = browser.http.cookies["parley_session"]
        assert (await browser.post("/signout")).status_code == 303
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as elsewhere:
        elsewhere.cookies.set("parley_session", copied)
        assert (await elsewhere.get("/")).status_code == 303  # to the sign-in page
        posted = await elsewhere.post("/signout", headers={"Origin": ORIGIN})
        assert posted.status_code == 303 and posted.headers["location"] == "/signin"


async def test_a_form_token_is_good_only_with_its_own_sign_in(parley: Harness) -> None:
    await parley.hire("bob")
    async with signed_in(parley) as first, signed_in(parley) as second:
        assert first.form_token and second.form_token
        assert first.form_token != second.form_token  # the same person, two sign-ins
        crossed = await second.http.post(
            "/chat/bob",
            data={"text": "hi", "form_token": first.form_token},
            headers={"Origin": ORIGIN},
        )
        own = await second.post("/chat/bob", {"text": "hi"})
    assert crossed.status_code == 403 and "form token" in crossed.text
    assert own.status_code == 303


async def test_signing_out_one_sign_in_leaves_the_others(parley: Harness) -> None:
    async with signed_in(parley) as first, signed_in(parley) as second:
        assert (await first.post("/signout")).status_code == 303
        assert (await first.get("/")).status_code == 303
        assert (await second.get("/")).status_code == 200


async def test_the_sign_in_page_says_what_answers_here(parley: Harness) -> None:
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        page = await client.get("/signin")
    assert "Parley 0.1.0" in page.text and 'href="/docs"' in page.text
