"""parley a2a …: an owner exposes an agent and lets a client in from the command line; the
token printed is the one A2A takes, and removing the client stops it."""

from __future__ import annotations

import json

import httpx

from tests.a2a.support import A2AHome
from tests.a2a.test_perimeter import post, rpc, send_params


def test_expose_add_a_client_then_remove_it_from_the_command_line(a2a_home: A2AHome) -> None:
    served = a2a_home.served
    assert served.run("agent", "hire", "scribe", "--node", "local").exit_code == 0
    exposed = served.run("a2a", "expose", "scribe", "--json")
    assert exposed.exit_code == 0, exposed.output
    card_url = json.loads(exposed.output)["card_url"]
    assert card_url.endswith("/a2a/scribe/.well-known/agent-card.json")
    assert "scribe" in served.run("a2a", "agents").output
    added = served.run("a2a", "client", "add", "planner")
    assert added.exit_code == 0, added.output
    token = added.output.split()[0]
    assert token.startswith("pac_") and "shown this once" in added.output
    answered = post(a2a_home, "scribe", token, rpc("SendMessage", send_params("hi")))
    assert answered.json()["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    listed = json.loads(served.run("a2a", "client", "list", "--json").output)["items"]
    assert [(c["name"], c["removed_at"]) for c in listed] == [("planner", None)]
    removed = served.run("a2a", "client", "remove", "planner")
    assert removed.exit_code == 0 and "removed_at" in removed.output
    assert post(a2a_home, "scribe", token, rpc("SendMessage", send_params("hi"))).status_code == 401
    assert served.run("a2a", "hide", "scribe").exit_code == 0
    card = httpx.get(a2a_home.agent_url("scribe") + "/.well-known/agent-card.json")
    assert card.status_code == 404


def test_mistakes_are_told_plainly(a2a_home: A2AHome) -> None:
    served = a2a_home.served
    for args, said in [
        (("a2a", "expose", "nobody"), "no agent named 'nobody'"),
        (("a2a", "hide", "nobody"), "no agent named 'nobody'"),
        (("a2a", "client", "add", "Bad Name"), "A2A client name 'Bad Name' is invalid"),
        (("a2a", "client", "remove", "nobody"), "no A2A client named 'nobody'"),
    ]:
        done = served.run(*args)
        assert done.exit_code != 0 and said in done.output, (args, done.output)
    assert served.run("a2a", "client", "add", "twice").exit_code == 0
    again = served.run("a2a", "client", "add", "twice")
    assert again.exit_code != 0 and "exists already" in again.output
