"""A Parley agent calling an A2A agent (a2a-sdk's own server, started here) as it calls a peer
installation's role: the reply comes back into the thread, a question is answered in the same
task, a failure and a time-out are told to the role that sent, a stop cancels the task there."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

from parley.federation.a2a_agents import A2AAgents, A2ARefused, card_json
from parley.federation.model import PeerEndpoint
from tests.a2a.support import A2AHome, home
from tests.federation.a2a_sample import TOKEN, Seen, sample_agent
from tests.support import eventually

ASKER = """
rules:
  - when: {text: "^ask (?P<what>.*)$", from: owner}
    do:
      - send: {to: "echo-back@sample", text: "{what}"}
  - when: {text: "^other (?P<what>.*)$", from: owner}
    do:
      - send: {to: "nobody@sample", text: "{what}"}
  - when: {text: "which one", from: "echo-back@sample"}
    do:
      - send: {to: "echo-back@sample", text: "the blue one"}
  - when: {from: "echo-back@sample"}
    do:
      - report: "sample says: {text}"
otherwise:
  - reply: "noted"
"""


@contextmanager
def asking(
    tmp_path: Path,
    sqlite_template: Path,
    streaming: bool = False,
    token: str = TOKEN,
    **settings: Any,
) -> Iterator[tuple[A2AHome, Seen]]:
    """The sample agent, and a Parley whose agent ``asker`` sends to it (as ``echo-back``)."""
    with (
        sample_agent(streaming) as (url, seen),
        home(tmp_path, sqlite_template, **settings) as parley,
    ):
        rules = tmp_path / "asker.yaml"
        rules.write_text(textwrap.dedent(ASKER))
        with parley.owner() as owner:
            body = {"name": "asker", "node": "local", "brain": f"scripted:{rules}"}
            hired = owner.post("/agents", json=body)
            assert hired.status_code == 201, hired.text
            added = owner.post(
                "/connections/a2a", json={"name": "sample", "url": url, "token": token}
            )
            assert added.status_code == 201, added.text
            assert added.json()["roles"] == ["echo-back", "summarise"]
        yield parley, seen


@pytest.fixture
def calling(tmp_path: Path, sqlite_template: Path) -> Iterator[tuple[A2AHome, Seen]]:
    with asking(tmp_path, sqlite_template, a2a_task_timeout_seconds=20) as both:
        yield both


def say(parley: A2AHome, text: str) -> None:
    with parley.owner() as owner:
        said = owner.post("/conversations/asker/messages", json={"text": text})
        assert said.status_code == 202, said.text


def conversation(parley: A2AHome) -> list[str]:
    with parley.owner() as owner:
        shown = owner.get("/conversations/asker").json()
    return [m["body"] for m in shown["messages"]["items"]]


async def told(parley: A2AHome, words: str) -> bool:
    async def check() -> bool:
        return any(words in body for body in conversation(parley))

    return await eventually(check, within=30)


async def test_the_agent_answers_back_into_the_thread(calling: tuple[A2AHome, Seen]) -> None:
    parley, seen = calling
    say(parley, "ask hello there")
    assert await told(parley, "sample says: echo: hello there"), conversation(parley)
    assert seen.texts == ["hello there"]
    with parley.owner() as owner:
        [thread] = owner.get("/agent-conversations").json()["items"]
    assert seen.contexts == [thread["thread_id"]]  # one A2A context per agent conversation
    assert "SubscribeToTask" not in seen.methods  # its card does not say it streams


async def test_a_streaming_agent_is_followed_by_its_stream(
    tmp_path: Path, sqlite_template: Path
) -> None:
    with asking(tmp_path, sqlite_template, streaming=True) as (parley, seen):
        say(parley, "ask ask me something")
        assert await told(parley, "sample says: you chose: the blue one"), conversation(parley)
    assert "SubscribeToTask" in seen.methods


async def test_a_question_is_answered_in_the_same_task(calling: tuple[A2AHome, Seen]) -> None:
    parley, seen = calling
    say(parley, "ask ask me something")
    assert await told(parley, "sample says: you chose: the blue one"), conversation(parley)
    assert seen.texts == ["ask me something", "the blue one"]
    assert len(set(seen.contexts)) == 1


async def test_a_failure_is_told_to_whoever_sent(calling: tuple[A2AHome, Seen]) -> None:
    parley, _ = calling
    say(parley, "ask fail please")
    assert await told(parley, "sample's task failed: could not do it"), conversation(parley)


async def test_a_role_the_card_lacks_is_refused(calling: tuple[A2AHome, Seen]) -> None:
    parley, seen = calling
    say(parley, "other hello")
    assert await told(parley, "sample has no agent nobody"), conversation(parley)
    assert seen.texts == []


def test_a_card_naming_an_inside_host_the_owner_did_not_give_is_refused(
    a2a_home: A2AHome,
) -> None:
    """The owner gave 127.0.0.1 (an agent on their own machine may be inside); the card's
    interface is at ``localhost``, a name the card alone gives, which resolves to loopback:
    refused when added, naming it, and nothing kept."""
    with sample_agent(card_host="localhost") as (url, seen), a2a_home.owner() as owner:
        added = owner.post("/connections/a2a", json={"name": "sample", "url": url})
        assert added.status_code == 400, added.text
        assert "localhost" in added.text and "resolves to a loopback" in added.text
        assert owner.get("/connections").json()["items"] == []
    assert seen.methods == []


async def test_a_card_host_that_resolves_inside_later_is_not_called() -> None:
    """DNS rebinding: the card's host resolved outside when the agent was added, and to
    loopback when it is called; the call is refused for good, and the agent hears nothing."""
    answers = [["93.184.215.14"], ["127.0.0.1"]]  # card.test's, in turn (the last kept)

    async def resolve(host: str, port: int) -> list[str]:
        if host != "card.test":
            return [host]  # the URL the owner gave: 127.0.0.1
        return answers.pop(0) if len(answers) > 1 else answers[0]

    agents = A2AAgents(resolve=resolve)
    with sample_agent(card_host="card.test") as (url, seen):
        card = await agents.read_card(url, TOKEN)  # checked: outside, then
        peer = PeerEndpoint(1, "sample", url, TOKEN, kind="a2a", card=card_json(card))
        message = Message(role=Role.ROLE_USER, message_id="m1", parts=[Part(text="hello")])
        with pytest.raises(A2ARefused, match=r"card\.test resolves to a loopback"):
            async with agents.calling(peer) as client:
                [_ async for _ in client.send_message(SendMessageRequest(message=message))]
        await agents.close()
    assert seen.methods == []


async def cancelled_there(
    parley: A2AHome, seen: Seen, action: str, method: str = "POST", status: int = 200
) -> None:
    """A task working at the sample agent is cancelled there once ``action`` is asked."""
    say(parley, "ask slow work")

    async def working() -> bool:
        return seen.texts == ["slow work"]

    assert await eventually(working, within=30)
    with parley.owner() as owner:
        assert owner.request(method, action).status_code == status
    assert await one_cancelled(seen)


async def one_cancelled(seen: Seen) -> bool:
    async def cancelled() -> bool:
        return len(seen.cancelled) == 1

    return await eventually(cancelled, within=30)


async def test_stopping_the_root_cancels_the_task_there(calling: tuple[A2AHome, Seen]) -> None:
    await cancelled_there(*calling, "/conversations/asker/stop")


async def test_deleting_the_root_cancels_the_task_there(calling: tuple[A2AHome, Seen]) -> None:
    await cancelled_there(*calling, "/conversations/asker", method="DELETE", status=204)


async def test_a_task_past_its_deadline_is_cancelled_and_told(
    tmp_path: Path, sqlite_template: Path
) -> None:
    with asking(tmp_path, sqlite_template, a2a_task_timeout_seconds=1) as (parley, seen):
        say(parley, "ask slow forever")
        assert await told(parley, "sample did not finish within 1 s"), conversation(parley)
        assert await one_cancelled(seen)


async def test_a_pause_cancels_the_work_there_and_refuses_what_follows(
    calling: tuple[A2AHome, Seen],
) -> None:
    parley, seen = calling
    await cancelled_there(parley, seen, "/connections/sample/pause")
    say(parley, "ask hello")
    assert await told(parley, "the connection to sample was paused here"), conversation(parley)
    assert seen.texts == ["slow work"]


async def test_a_revoked_agent_is_never_called_again(calling: tuple[A2AHome, Seen]) -> None:
    parley, seen = calling
    with parley.owner() as owner:
        revoked = owner.post("/connections/sample/revoke")
        assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    say(parley, "ask hello")
    assert await told(parley, "revoked"), conversation(parley)
    assert seen.texts == []


async def test_a_wrong_token_is_retried_and_shown_on_the_connection(
    tmp_path: Path, sqlite_template: Path
) -> None:
    with asking(tmp_path, sqlite_template, token="wrong") as (parley, seen):
        say(parley, "ask hello")

        async def shown() -> bool:
            with parley.owner() as owner:
                [row] = owner.get("/connections").json()["items"]
            return row["failures"] >= 1 and "401" in (row["last_error"] or "")

        assert await eventually(shown, within=30)
        assert seen.texts == []


def test_adding_checks_the_name_the_url_and_the_card(a2a_home: A2AHome) -> None:
    with sample_agent() as (url, _), a2a_home.owner() as owner:
        for body, status, said in [
            ({"name": "Bad Name", "url": url}, 400, "invalid"),
            ({"name": "sample", "url": "ftp://x"}, 400, "http(s) URL"),
            ({"name": "sample", "url": "http://127.0.0.1:9/"}, 400, "no A2A agent card"),
            ({"name": "sample", "url": url + "/nothing-here"}, 400, "no A2A agent card"),
            ({"name": "sample", "url": url, "token": "a\x00b"}, 400, "NUL"),
        ]:
            answered = owner.post("/connections/a2a", json=body)
            assert answered.status_code == status, (body, answered.text)
            assert said in answered.text, (body, answered.text)
        assert owner.get("/connections").json()["items"] == []
        assert (
            owner.post("/connections/a2a", json={"name": "sample", "url": url}).status_code == 201
        )
        again = owner.post("/connections/a2a", json={"name": "sample", "url": url})
        assert again.status_code == 409
        exposing = owner.put("/connections/sample/exposed", json={"agents": ["x"]})
        assert exposing.status_code == 400 and "only called" in exposing.text


def test_add_a2a_from_the_command_line_reads_the_token_from_a_file(
    a2a_home: A2AHome, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with sample_agent() as (url, _):
        added = a2a_home.served.run(
            "connection", "add-a2a", "sample", url, "--token-file", str(token_file), "--json"
        )
    assert added.exit_code == 0, added.output
    shown = json.loads(added.output)
    assert (shown["kind"], shown["roles"]) == ("a2a", ["echo-back", "summarise"])
    assert TOKEN not in added.output
