"""Connecting two installations, as their owners do it: an invite on one, accepted on the
other, through the real CLI against real servers with stores of their own."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from parley.store import Store
from parley.store.tables import connections, invites
from tests.federation.peers import Installation, connect, installations, invite
from tests.support import ManualClock


def _rows(store_url: str, table: Any) -> list[Any]:
    async def read() -> list[Any]:
        store = await Store.open(store_url)
        try:
            async with store.transaction() as tx:
                return list(await tx.connection.execute(select(table)))
        finally:
            await store.close()

    return asyncio.run(read())


def _sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def test_invite_and_accept_connect_both_sides(tmp_path: Path, store_urls: list[str]) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        listed_one = one.get("/connections")["items"]
        listed_two = two.get("/connections")["items"]
        assert [(c["name"], c["url"], c["state"]) for c in listed_one] == [
            ("two", two.url, "active")
        ]
        assert [(c["name"], c["url"], c["state"]) for c in listed_two] == [
            ("one", one.url, "active")
        ]
        assert listed_one[0]["queued"] == 0 and listed_one[0]["exposed"] == []
        table = one.ok("connection", "list")
        assert "two" in table and "active" in table
        shown = [side.ok("connection", "list", "--json") for side in (one, two)]
    # Each side keeps the token it issued as a hash only, and the one it received to call the
    # peer; the two match across, and neither is ever shown.
    (at_one,) = _rows(store_urls[0], connections)
    (at_two,) = _rows(store_urls[1], connections)
    assert at_one.issued_token_hash == _sha256(at_two.peer_token)
    assert at_two.issued_token_hash == _sha256(at_one.peer_token)
    for token in (at_one.peer_token, at_two.peer_token):
        assert token.startswith("ppt_")
        assert all(token not in listing for listing in shown)
    assert "token" not in json.dumps(listed_one + listed_two)


def test_a_used_invite_is_refused(tmp_path: Path, store_urls: list[str]) -> None:
    with installations(tmp_path, store_urls, ["one", "two", "three"]) as (one, two, three):
        code = invite(one, "two")
        two.ok("connection", "accept", code, "--name", "one")
        again = three.cli("connection", "accept", code, "--name", "one")
        assert again.exit_code == 2, again.output
        assert "used already or expired" in again.output
        assert three.get("/connections")["items"] == []
        assert [c["name"] for c in one.get("/connections")["items"]] == ["two"]
    (used,) = _rows(store_urls[0], invites)
    assert used.used_at is not None and code.split(":")[1] not in used.secret_hash


def test_an_expired_invite_is_refused(tmp_path: Path, store_urls: list[str]) -> None:
    clock = ManualClock()
    with installations(tmp_path, store_urls, ["one", "two"], {"one": clock}) as (one, two):
        code = invite(one, "two", "--expires", "90s")
        clock.advance(seconds=91)
        late = two.cli("connection", "accept", code, "--name", "one")
        assert late.exit_code == 2, late.output
        assert "expired" in late.output
        assert one.get("/connections")["items"] == two.get("/connections")["items"] == []


def test_a_damaged_code_and_a_taken_name_are_refused_before_the_peer_is_called(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        damaged = two.cli("connection", "accept", "parley-invite:%%%", "--name", "one")
        assert damaged.exit_code == 2 and "damaged" in damaged.output
        nested = "parley-invite:" + base64.urlsafe_b64encode(b"[" * 3000).decode()
        deep = two.cli("connection", "accept", nested, "--name", "one")
        assert deep.exit_code == 2 and "damaged" in deep.output
        foreign = two.cli("connection", "accept", "hello", "--name", "one")
        assert foreign.exit_code == 2 and "not an invite code" in foreign.output
        connect(one, two)
        code = invite(one, "again")
        taken = two.cli("connection", "accept", code, "--name", "one")
        assert taken.exit_code == 4 and "exists already" in taken.output
        # The invite was not spent on the refused accept: it still works under another name.
        two.ok("connection", "accept", code, "--name", "one-again")


def test_tokens_of_each_kind_are_refused_where_another_is_expected(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        connect(one, two)
        (at_two,) = _rows(store_urls[1], connections)
        peer_token = at_two.peer_token  # what two uses to call one
        batch: dict[str, list[object]] = {"frames": []}
        for token in (one.served.owner_token, "prt_" + "x" * 43, "ppt_unknown", ""):
            answer = one.api("POST", "/federation/v1/frames", token, json=batch)
            assert answer.status_code == 401, (token, answer.text)
        assert one.api("GET", "/api/v1/me", peer_token).status_code == 401
        # The right token passes the door; an empty batch is then refused as a batch.
        answer = one.api("POST", "/federation/v1/frames", peer_token, json=batch)
        assert answer.status_code == 400, answer.text


def test_only_owners_manage_connections(tmp_path: Path, store_urls: list[str]) -> None:
    with installations(tmp_path, store_urls, ["one"]) as (one,):
        member = one.api("POST", "/api/v1/people", json={"name": "ada", "role": "member"})
        token = member.json()["token"]
        refused = one.cli("connection", "invite", "--name", "two", token=token)
        assert refused.exit_code == 5, refused.output
        assert one.cli("connection", "list", token=token).exit_code == 5


def _json(at: Installation, *args: str) -> Any:
    return json.loads(at.ok(*args, "--json"))


@contextmanager
def _page(at: Installation, token: str | None = None) -> Iterator[httpx.Client]:
    """A browser signed in to ``at``'s page (as its owner by default)."""
    with httpx.Client(base_url=at.url, timeout=30) as browser:
        signed = browser.post(
            "/signin", data={"token": token or at.served.owner_token}, headers={"Origin": at.url}
        )
        assert signed.status_code == 303, signed.text
        yield browser


def _form_token(page: str) -> str:
    return page.split('name="form_token" value="')[1].split('"')[0]


def test_owners_connect_two_installations_on_their_pages(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls, ["one", "two"]) as (one, two):
        with _page(one) as first, _page(two) as second:
            token = _form_token(first.get("/connections").text)
            made = first.post("/connections/invite", data={"name": "two", "expires": "2h",
                                                           "form_token": token})  # fmt: skip
            assert made.status_code == 201 and made.headers["cache-control"] == "no-store"
            code = made.text.split('id="invite-code" class="token" value="')[1].split('"')[0]
            assert code.startswith("parley-invite:")
            token = _form_token(second.get("/connections").text)
            accepted = second.post(
                "/connections/accept", data={"code": code, "name": "one", "form_token": token}
            )
            assert accepted.status_code == 303, accepted.text
            again = second.post(
                "/connections/accept", data={"code": code, "name": "uno", "form_token": token}
            )
            shown = second.get("/connections").text
        assert again.status_code in (400, 403, 404, 409) and "uno" not in shown  # once only
        assert 'id="connection-one"' in shown
        assert [c["name"] for c in _json(one, "connection", "list")["items"]] == ["two"]
        assert code not in one.ok("connection", "list")  # only its hash was kept

        one.ok("agent", "hire", "scribe", "--node", "one")
        with _page(one) as first:
            token = _form_token(first.get("/connections").text)
            chosen = [
                first.post("/connections/two/expose", data={"agents": agents, "form_token": token})
                for agents in ("scribe", "nobody-here")
            ]
            listed = _json(one, "connection", "list")["items"][0]
        assert [answer.status_code for answer in chosen] == [303, 404]
        assert listed["exposed"] == ["scribe"]  # the refused choice changed nothing


def test_a_member_has_no_connect_forms_and_posting_them_is_refused(
    tmp_path: Path, store_urls: list[str]
) -> None:
    with installations(tmp_path, store_urls[:1], ["one"]) as (one,):
        mia = _json(one, "person", "add", "mia", "--member")["token"]
        with _page(one, mia) as browser:
            page = browser.get("/connections")
            token = _form_token(page.text)
            refused = browser.post("/connections/invite", data={"name": "x", "form_token": token})
        assert page.status_code == 403 and 'action="/connections/invite"' not in page.text
        assert refused.status_code == 403
        assert _json(one, "connection", "list")["items"] == []
