"""The A2A page: an owner exposes an agent and lets a client in (its token on that answer
only), hides the agent and removes the client (only with its confirmation); a member gets the
API's refusal; an A2A agent's connection shows its roles."""

from __future__ import annotations

import re

from parley.tokens import hash_token
from tests.support import Harness
from tests.web.support import signed_in

CONFIRMED = {"confirm": "understood"}


async def test_an_owner_exposes_lets_a_client_in_hides_and_removes(parley: Harness) -> None:
    await parley.hire("scribe")
    async with signed_in(parley) as browser:
        page = await browser.get("/a2a-access")
        assert page.status_code == 200 and "No agent is exposed over A2A yet." in page.text
        exposed = await browser.post("/a2a-access/expose", {"agent": "scribe"})
        assert exposed.status_code == 303
        page = await browser.get("/a2a-access")
        assert "scribe is exposed over A2A" in page.text
        assert "/a2a/scribe/.well-known/agent-card.json" in page.text
        added = await browser.post("/a2a-access/clients", {"name": "planner"})
        assert added.status_code == 201 and "only this once" in added.text
        token = re.search(r'value="(pac_[^"]+)"', added.text)
        assert token is not None
        async with parley.context.store.transaction() as tx:
            client, _ = await tx.a2a.caller(hash_token(token.group(1)), "scribe")
        assert client is not None and client.name == "planner"
        page = await browser.get("/a2a-access")
        assert token.group(1) not in page.text  # shown once, on the answer that made it
        refused = await browser.post("/a2a-access/clients/planner/remove")
        assert refused.status_code == 400 and "stops for good" in refused.text
        removed = await browser.post("/a2a-access/clients/planner/remove", CONFIRMED)
        assert removed.status_code == 303
        hidden = await browser.post("/a2a-access/agents/scribe/hide")
        assert hidden.status_code == 303
        page = await browser.get("/a2a-access")
        assert "No agent is exposed over A2A yet." in page.text and "removed" in page.text
    async with parley.context.store.transaction() as tx:
        assert await tx.a2a.caller(hash_token(token.group(1)), "scribe") == (None, None)
        assert await tx.a2a.exposed() == []


async def test_a_member_gets_the_apis_refusal(parley: Harness) -> None:
    await parley.hire("scribe")
    token = await parley.add_person("ann")
    async with signed_in(parley, token) as browser:
        assert (await browser.get("/a2a-access")).status_code == 403
        for path, fields in (
            ("/a2a-access/expose", {"agent": "scribe"}),
            ("/a2a-access/clients", {"name": "sneaky"}),
        ):
            answer = await browser.post(path, fields)
            assert answer.status_code == 403, path
    async with parley.context.store.transaction() as tx:
        assert await tx.a2a.exposed() == [] and await tx.a2a.clients() == []


async def test_an_a2a_agents_connection_shows_its_roles(parley: Harness) -> None:
    card = '{"name": "Sample", "skills": [{"id": "echo_back", "name": "echo"}]}'
    async with parley.context.store.transaction() as tx:
        await tx.connections.add(
            "sample", "http://a.example", "hash-x", "", parley.clock.now(), None, "a2a", card
        )
    async with signed_in(parley) as browser:
        page = await browser.get("/connections")
    assert "an A2A agent; its roles: echo-back" in page.text
