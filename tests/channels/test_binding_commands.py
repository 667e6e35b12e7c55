"""parley binding list|unbind and /api/v1/bindings through a running server: owners bind a web
conversation to a session, list, unbind by binding or by session with a reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from tests.cli.test_runtime_commands import hire, ok, ok_json, run
from tests.served import Served


def _api(served: Served, token: str | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token or served.owner_token}"}
    return httpx.Client(base_url=f"{served.url}/api/v1", headers=headers, timeout=10)


def _say(served: Served, agent: str, text: str) -> int:
    with _api(served) as api:
        said = api.post(f"/conversations/{agent}/messages", json={"text": text})
    assert said.status_code == 202, said.text
    topic_id: int = said.json()["topic_id"]
    return topic_id


def _bind(served: Served, session: str, conversation: str, **more: Any) -> httpx.Response:
    body = {"session": session, "channel": "web", "account_id": "home",
            "conversation_id": conversation} | more  # fmt: skip
    with _api(served) as api:
        return api.post("/bindings", json=body)


def _web_conversations(served: Served, count: int) -> list[str]:
    """An account ``home`` of the web channel and ``count`` conversations in it."""
    ok(served, "channel", "account", "set", "web", "home")
    return [ok(served, "channel", "web", "open", f"talk {n}").strip() for n in range(count)]


def test_bind_list_and_unbind(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "scribe")
    topic = _say(served, "scribe", "hello")
    session = f"topic:{topic}"
    [t2] = _web_conversations(served, 1)
    t1 = ok(served, "channel", "web", "open", "part", "--thread-of", t2).strip()
    first = _bind(served, session, t1, parent_conversation_id=t2, idle_timeout_seconds=60)
    assert first.status_code == 201, first.text
    assert first.json()["bound_by"] == "person:owner"
    assert _bind(served, session, t2).status_code == 201
    taken = _bind(served, session, t1)
    assert taken.status_code == 409 and "is bound already" in taken.json()["message"]

    listed = ok_json(served, "binding", "list")["items"]
    assert [(b["conversation"]["conversation_id"], b["status"]) for b in listed] == [
        (t2, "active"), (t1, "active"),
    ]  # fmt: skip
    words = ok(served, "binding", "list", COLUMNS="250")
    assert f"web:home:{t1} (in {t2})" in words and session in words

    ended = ok(served, "binding", "unbind", str(first.json()["id"]), "--reason", "enough")
    assert ended == f"ended binding {first.json()['id']} (web:home:{t1} (in {t2})): enough\n"
    assert ok(served, "binding", "unbind", str(first.json()["id"])) == (
        "nothing to end: no live binding there\n"
    )
    by_session = ok_json(served, "binding", "unbind", "--session", session)
    assert [b["ended_reason"] for b in by_session] == ["unbound"]
    assert ok_json(served, "binding", "list", "--status", "active")["items"] == []
    shown = ok_json(served, "binding", "list", "--session", session, "--limit", "1")
    assert shown["next"] is not None and shown["items"][0]["status"] == "ended"


def test_bad_binding_requests_are_refused_clearly(served: Served, tmp_path: Path) -> None:
    hire(served, tmp_path, "scribe")
    topic = _say(served, "scribe", "hello")
    discord = _bind(served, f"topic:{topic}", "t1", channel="discord")
    assert discord.status_code == 400
    assert "no discord adapter speaks for account 'home'" in discord.json()["message"]
    missing = _bind(served, f"topic:{topic}", "77")
    assert missing.status_code == 404 and "no web conversation web:home:77" in missing.text
    [made] = _web_conversations(served, 1)
    assert _bind(served, "topic:99", made).status_code == 404
    assert "not a session key" in _bind(served, "run:1", made).json()["message"]
    assert (
        "idle_timeout_seconds"
        in _bind(served, f"topic:{topic}", made, idle_timeout_seconds=-1).json()["message"]
    )
    assert run(served, "binding", "unbind").exit_code == 2
    assert run(served, "binding", "unbind", "7").exit_code == 3
    assert run(served, "binding", "list", "--status", "gone").exit_code == 2

    token = ok_json(served, "person", "add", "ada", "--member")["token"]
    refused = run(served, "binding", "list", PARLEY_TOKEN=token)
    assert refused.exit_code == 5
    assert "only an owner may read the bindings; ada is a member" in refused.stderr
    with _api(served, token) as api:
        assert api.post("/bindings/unbind", json={"binding": 1}).status_code == 403
