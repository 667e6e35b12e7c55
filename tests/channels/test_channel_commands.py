"""parley channel … through a running server: an owner sets up the web account and links
users; a person opens a web conversation, writes in it and reads the reply there; the edges
refuse what is wrong with a clear message."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.test_runtime_commands import hire, ok, ok_json, run, until
from tests.served import Served

ECHO = "otherwise: [{reply: 'heard {text}'}]"


def test_a_web_conversation_from_the_cli(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "scribe", ECHO)
    assert ok(served, "channel", "account", "set", "web", "home", "--default-agent", "scribe") == (
        "web account home: scribe\n"
    )
    assert ok_json(served, "channel", "account", "list")[0]["default_agent"] == "scribe"
    token = ok_json(served, "person", "add", "ada", "--member")["token"]
    as_ada = {"PARLEY_TOKEN": token}

    conversation = ok(served, "channel", "web", "open", "errands", **as_ada).strip()
    said = ok(served, "channel", "web", "say", conversation, "milk", **as_ada)
    assert re.fullmatch(rf"web conversation {conversation} \(run \d+ queued\)\n", said), said

    def replied() -> bool:
        shown = ok_json(served, "channel", "web", "show", conversation, **as_ada)
        return [m["body"] for m in shown["messages"]] == ["milk", "heard milk"]

    assert until(replied)
    shown = ok(served, "channel", "web", "show", conversation, **as_ada)
    assert shown.endswith("person:ada: milk\nscribe: heard milk\n")
    thread = ok(served, "channel", "web", "open", "eggs", "--thread-of", conversation, **as_ada)
    assert f"  thread {thread.strip()}: eggs" in ok(
        served, "channel", "web", "show", conversation, **as_ada
    )
    # it is ada's alone: another member, or an owner, neither lists, reads nor writes it
    other = {"PARLEY_TOKEN": ok_json(served, "person", "add", "bo", "--member")["token"]}
    for someone in (other, {}):
        assert run(served, "channel", "web", "show", conversation, **someone).exit_code == 3
        assert run(served, "channel", "web", "say", conversation, "hi", **someone).exit_code == 3
        assert ok_json(served, "channel", "web", "list", **someone) == []
    assert ok_json(served, "channel", "web", "list", **as_ada)[0]["person"] == "ada"


def test_identities_and_refusals(served: Served) -> None:
    ok(served, "person", "add", "ada", "--member")
    ok(served, "channel", "account", "set", "discord", "bot1")
    assert ok(served, "channel", "identity", "link", "discord", "bot1", "u 42", "ada") == (
        "discord user u 42 on bot1 is ada\n"
    )
    assert ok_json(served, "channel", "identity", "list", "discord", "bot1") == [
        {"user_id": "u 42", "person": "ada"}
    ]
    assert (
        run(served, "channel", "identity", "link", "discord", "bot1", "u1", "nobody").exit_code == 3
    )
    assert run(served, "channel", "identity", "link", "discord", "nope", "u1", "ada").exit_code == 3
    ok(served, "channel", "identity", "unlink", "discord", "bot1", "u 42")
    assert run(served, "channel", "identity", "unlink", "discord", "bot1", "u 42").exit_code == 3
    missing = run(served, "channel", "account", "set", "web", "home", "--default-agent", "ghost")
    assert missing.exit_code == 3 and "no agent named 'ghost'" in missing.stderr
    assert run(served, "channel", "web", "open", "x", "--account", "nowhere").exit_code == 3
    ok(served, "channel", "account", "set", "web", "home")
    conversation = ok(served, "channel", "web", "open", "x").strip()
    lost = run(served, "channel", "web", "say", conversation, "anyone?")
    assert lost.exit_code == 4
    assert "is bound to no session and web account 'home' has no default agent" in lost.stderr
    token = ok_json(served, "person", "add", "bo", "--member")["token"]
    refused = run(served, "channel", "account", "list", PARLEY_TOKEN=token)
    assert refused.exit_code == 5 and "only an owner may read channel accounts" in refused.stderr
