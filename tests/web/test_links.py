"""The connections and channels pages: an owner pauses, unpauses and revokes a connection (a
revoke only with its confirmation), unbinds a binding and reads the delivery log; a member gets
no buttons and the same refusal the API gives when posting by hand."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from parley.channels.connected import AccountPhase
from parley.channels.outbound import ChannelPost
from parley.deliveries.model import RouteNote
from parley.web.links import PAGE
from tests.support import Harness, eventually
from tests.web.support import signed_in

CONFIRMED = {"confirm": "understood"}


async def _connection(parley: Harness, name: str = "far") -> None:
    """A connection as a handshake leaves it, without a second installation (nothing answers
    at its URL: nothing here needs the peer)."""
    async with parley.context.store.transaction() as tx:
        now = parley.clock.now()
        await tx.connections.add(name, "http://127.0.0.1:9", f"hash-{name}", "ppt_x", now, None)


async def _state(parley: Harness, name: str = "far") -> str:
    listed = await parley.owner.get("/api/v1/connections")
    assert listed.status_code == 200, listed.text
    (found,) = [c for c in listed.json()["items"] if c["name"] == name]
    return str(found["state"])


async def _api(parley: Harness, method: str, path: str, **body: Any) -> Any:
    answer = await parley.owner.request(method, f"/api/v1{path}", json=body or None)
    assert answer.status_code < 300, answer.text
    return answer.json()


async def _binding(parley: Harness) -> int:
    """A web conversation bound to the owner's conversation with scribe, by the API."""
    await parley.hire("scribe")
    said = await _api(parley, "POST", "/conversations/scribe/messages", text="hi")

    async def answered() -> bool:
        shown = await _api(parley, "GET", "/conversations/scribe")
        return any(m["kind"] == "reply" for m in shown["messages"]["items"])

    assert await eventually(answered)
    await _api(parley, "PUT", "/channels/web/accounts/home", default_agent="scribe")
    place = await _api(parley, "POST", "/channels/web/home/conversations", title="plans")
    bound = await _api(
        parley, "POST", "/bindings", session=f"topic:{said['topic_id']}", channel="web",
        account_id="home", conversation_id=str(place["id"]), idle_timeout_seconds=5400,
        max_age_seconds=2 * 86400,
    )  # fmt: skip
    return int(bound["id"])


async def _routed(parley: Harness, count: int = 1) -> None:
    """Deliveries the channel router chose a place for, as its note records (the router's
    own choices are tested in tests/channels)."""
    async with parley.context.store.transaction() as tx:
        for n in range(count):
            post = ChannelPost(channel="web", account_id="home", conversation_id="999", text="x")
            note = RouteNote("fallback", "no-active-binding", f"topic:{n}")
            await tx.outbox.put(f"test:{n}", post, parley.clock.now(), route=note)


async def test_an_owner_pauses_then_unpauses_a_connection(parley: Harness) -> None:
    await _connection(parley)
    async with signed_in(parley) as browser:
        page = await browser.get("/connections")
        assert page.status_code == 200
        assert 'action="/connections/far/pause"' in page.text
        assert 'action="/connections/far/unpause"' not in page.text
        assert "far" in page.text and "never" in page.text  # no contact yet
        paused = await browser.post("/connections/far/pause")
        assert paused.status_code == 303
        assert await _state(parley) == "paused"
        page = await browser.get("/connections")
        assert "The connection far is paused." in page.text
        assert 'action="/connections/far/unpause"' in page.text
        assert 'action="/connections/far/pause"' not in page.text
        unpaused = await browser.post("/connections/far/unpause")
        assert unpaused.status_code == 303
        assert await _state(parley) == "active"


async def test_a_revoke_needs_its_confirmation_and_is_for_good(parley: Harness) -> None:
    await _connection(parley)
    async with signed_in(parley) as browser:
        page = await browser.get("/connections")
        assert "hx-confirm=" in page.text and "I understand revoking is permanent" in page.text
        assert 'name="confirm" value="understood" required' in page.text
        refused = await browser.post("/connections/far/revoke")
        assert refused.status_code == 400
        assert "I understand revoking is permanent" in refused.text
        assert await _state(parley) == "active"
        wrong = await browser.post("/connections/far/revoke", {"confirm": "yes"})
        assert wrong.status_code == 400
        assert await _state(parley) == "active"

        revoked = await browser.post("/connections/far/revoke", CONFIRMED)
        assert revoked.status_code == 303
        assert await _state(parley) == "revoked"
        again = await browser.post("/connections/far/unpause")
        assert again.status_code == 409 and "revoked for good" in again.text
        assert await _state(parley) == "revoked"
        page = await browser.get("/connections")
        for action in ("pause", "unpause", "revoke"):
            assert f'action="/connections/far/{action}"' not in page.text


async def test_a_member_has_no_buttons_and_posting_by_hand_is_refused(parley: Harness) -> None:
    await _connection(parley)
    binding = await _binding(parley)
    token = await parley.add_person("ann")
    async with signed_in(parley, token) as browser:
        for path in ("/connections", "/channels"):
            page = await browser.get(path)
            assert page.status_code == 403, path  # the library's rule: owners read these
            assert "Pause" not in page.text and "Revoke" not in page.text
            assert "Unbind" not in page.text
        for action, fields in (("pause", {}), ("unpause", {}), ("revoke", CONFIRMED)):
            answer = await browser.post(f"/connections/far/{action}", fields)
            assert answer.status_code == 403, action
            assert "Not allowed" in answer.text
        assert await _state(parley) == "active"
        await _api(parley, "POST", "/connections/far/pause")
        assert (await browser.post("/connections/far/unpause")).status_code == 403
        assert await _state(parley) == "paused"
        unbound = await browser.post(f"/bindings/{binding}/unbind")
        assert unbound.status_code == 403
    shown = await _api(parley, "GET", f"/bindings/{binding}")
    assert shown["status"] == "active"


async def test_a_binding_shows_with_its_expiry_and_unbind_ends_it(parley: Harness) -> None:
    binding = await _binding(parley)
    async with signed_in(parley) as browser:
        page = await browser.get("/channels")
        assert page.status_code == 200
        assert f'id="binding-{binding}"' in page.text
        assert "idle timeout 1h 30m" in page.text and "max age 2d" in page.text
        assert "expires" in page.text  # bound_at + max age
        assert f'action="/bindings/{binding}/unbind"' in page.text
        ended = await browser.post(f"/bindings/{binding}/unbind", {"reason": "done here"})
        assert ended.status_code == 303
        shown = await _api(parley, "GET", f"/bindings/{binding}")
        assert (shown["status"], shown["ended_reason"]) == ("ended", "done here")
        page = await browser.get("/channels")
        assert f"Binding {binding} ended." in page.text
        assert f'action="/bindings/{binding}/unbind"' not in page.text
        active = await browser.get("/channels?status=active")
        assert f'id="binding-{binding}"' not in active.text
        ended_only = await browser.get("/channels?status=ended")
        assert f'id="binding-{binding}"' in ended_only.text and "done here" in ended_only.text
        assert (await browser.get("/channels?status=gone")).status_code == 400


async def test_the_delivery_log_shows_mode_and_reason_a_page_at_a_time(parley: Harness) -> None:
    await _routed(parley, PAGE + 1)
    async with signed_in(parley) as browser:
        page = await browser.get("/channels")
        assert page.status_code == 200
        assert "<td>fallback</td>" in page.text and "<td>no-active-binding</td>" in page.text
        assert f"topic:{PAGE}" in page.text  # newest first
        assert "test:0<" not in page.text  # the oldest is on the next page
        older = page.text.split('<p class="more"><a href="')[1].split('"')[0]
        assert "deliveries_before=" in older
        rest = await browser.get(older.replace("&amp;", "&"))
        assert rest.status_code == 200
        assert "test:0<" in rest.text and f"test:{PAGE}<" not in rest.text
        assert "<td>fallback</td>" in rest.text


async def test_accounts_show_their_connection_s_state_error_and_rate_limit(
    parley: Harness,
) -> None:
    await parley.hire("scribe")
    await _api(parley, "PUT", "/channels/discord/accounts/guild", default_agent="scribe")
    await _api(parley, "PUT", "/channels/discord/accounts/quiet", default_agent=None)
    states = parley.context.runtime.channels.states
    states.set("discord", "guild", AccountPhase.CONNECTED)
    states.failed("discord", "guild", "Discord refused the request: 400 bad body")
    states.rate_limited("discord", "guild", parley.clock.now() + timedelta(minutes=5))
    async with signed_in(parley) as browser:
        page = (await browser.get("/channels")).text
    row = page.split('id="account-discord-guild"')[1].split("</tr>")[0]
    assert "state-connected" in row and "scribe" in row
    assert "Discord refused the request: 400 bad body" in row
    assert "rate-limited until" in row
    quiet = page.split('id="account-discord-quiet"')[1].split("</tr>")[0]
    assert "not connected" in quiet and "no token" in quiet
    listed = {a["account_id"]: a for a in await _api(parley, "GET", "/channels/accounts")}
    assert listed["guild"]["state"] == "connected"
    assert listed["guild"]["last_error"] == "Discord refused the request: 400 bad body"
    assert listed["guild"]["rate_limited_until"] is not None
    assert listed["quiet"]["state"] is None
    parley.clock.advance(minutes=5)  # the wait asked for has passed
    again = {a["account_id"]: a for a in await _api(parley, "GET", "/channels/accounts")}
    assert again["guild"]["rate_limited_until"] is None
