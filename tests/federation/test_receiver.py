"""The receiving side of the wire, against a real server, with the test as the peer (it made the
connection by the real handshake and speaks the real protocol): per-frame verdicts, dedup with
the first verdict replayed, per-thread seq, roles, exposure, and whole batches refused."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.federation.peers import (
    Installation,
    agent_conversations,
    handshake_as_peer,
    hire_scripted,
    installations,
    messages,
    text_frame,
    wait_for,
)

HOST = """
rules:
  - when: {text: "(?i)^hold"}
    do:
      - sleep: 60
otherwise:
  - remember: "{sender} said {text}"
"""


@pytest.fixture
def host(tmp_path: Path, store_urls: list[str]) -> Iterator[tuple[Installation, str]]:
    """Installation 'one' with an agent 'host' exposed to the test's connection 'peer'."""
    with installations(tmp_path, store_urls, ["one"]) as (one,):
        token = handshake_as_peer(one)
        hire_scripted(one, "host", HOST, tmp_path)
        one.ok("connection", "expose", "peer", "host")
        yield one, token


def post(at: Installation, token: str, *frames: dict[str, Any]) -> list[dict[str, Any]]:
    answer = at.api("POST", "/federation/v1/frames", token, json={"frames": list(frames)})
    assert answer.status_code == 200, answer.text
    verdicts = answer.json()["verdicts"]
    assert len(verdicts) == len(frames)
    return list(verdicts)


def summary(verdicts: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(v["verdict"], v.get("original"), v.get("reason")) for v in verdicts]


def state(at: Installation) -> list[Any]:
    """Everything a frame could change: the conversations and the text in them."""
    found = agent_conversations(at)
    return [(c["thread_id"], c["status"], messages(at, c["id"])) for c in found]


def test_an_unknown_thread_starts_a_conversation_rooted_in_itself(
    host: tuple[Installation, str],
) -> None:
    one, token = host
    verdicts = post(one, token, text_frame("t1", 1, "m1"), text_frame("t1", 2, "m2"))
    assert summary(verdicts) == [("accepted", None, None), ("accepted", None, None)]
    assert [v["message_id"] for v in verdicts] == ["m1", "m2"]
    (conversation,) = agent_conversations(one)
    assert conversation["thread_id"] == "t1"
    assert (conversation["agent"], conversation["sender"]) == ("host", "visitor@peer")
    assert conversation["root_id"] == conversation["id"]
    # Its page says who started it and who was asked, as the API does.
    with httpx.Client(base_url=one.url, headers={"Origin": one.url}) as browser:
        browser.post("/signin", data={"token": one.served.owner_token, "then": "/"})
        page = browser.get(f"/roots/{conversation['id']}")
    assert page.status_code == 200 and "Started by visitor@peer, asking host" in page.text
    said = [(m["author"], m["body"]) for m in messages(one, conversation["id"])]
    assert said == [("visitor@peer", "text 1"), ("visitor@peer", "text 2")]


def test_a_repeated_frame_changes_nothing_and_gets_its_first_verdict_again(
    host: tuple[Installation, str],
) -> None:
    one, token = host
    post(one, token, text_frame("t1", 1, "m1"))
    refused = post(one, token, text_frame("t2", 1, "m9", to_role="nobody"))
    assert summary(refused) == [("rejected", None, "unknown_role")]
    before = state(one)
    again = post(one, token, text_frame("t1", 1, "m1"), text_frame("t2", 1, "m9", to_role="nobody"))
    assert summary(again) == [
        ("duplicate", "accepted", None),
        ("duplicate", "rejected", "unknown_role"),
    ]
    assert again[1]["detail"] == refused[0]["detail"]
    assert state(one) == before


def test_seq_holds_order_per_thread(host: tuple[Installation, str]) -> None:
    one, token = host
    post(one, token, text_frame("t1", 1, "m1"))
    early = post(one, token, text_frame("t1", 3, "m3"), text_frame("t2", 1, "n1"))
    assert summary(early) == [("rejected", None, "invalid"), ("accepted", None, None)]
    assert "from the future" in early[0]["detail"]
    # It says where the thread goes on from, for the sender to send again from there.
    assert (early[0]["expected_seq"], early[1]["expected_seq"]) == (2, None)
    # The early frame was not kept: sent again after the one before it, it is taken.
    late = post(one, token, text_frame("t1", 2, "m2"), text_frame("t1", 3, "m3"))
    assert summary(late) == [("accepted", None, None), ("accepted", None, None)]
    reused = post(one, token, text_frame("t1", 2, "other"))
    assert summary(reused) == [("rejected", None, "invalid")]
    assert reused[0]["expected_seq"] is None  # taken, not a gap: nothing to send again
    (t1,) = [c for c in agent_conversations(one) if c["thread_id"] == "t1"]
    assert [m["body"] for m in messages(one, t1["id"])] == ["text 1", "text 2", "text 3"]


def test_a_known_thread_with_other_roles_is_refused_and_does_not_wedge(
    host: tuple[Installation, str],
) -> None:
    one, token = host
    post(one, token, text_frame("t1", 1, "m1"))
    wrong = post(
        one,
        token,
        text_frame("t1", 2, "m2", from_role="intruder"),
        text_frame("t1", 3, "m3", to_role="someone"),
        text_frame("t1", 4, "m4"),
    )
    assert summary(wrong) == [
        ("rejected", None, "roles"),
        ("rejected", None, "roles"),
        ("accepted", None, None),
    ]
    (t1,) = agent_conversations(one)
    assert [m["body"] for m in messages(one, t1["id"])] == ["text 1", "text 4"]


def test_only_exposed_available_agents_take_a_new_thread(
    host: tuple[Installation, str], tmp_path: Path
) -> None:
    one, token = host
    hire_scripted(one, "hidden", HOST, tmp_path)
    hire_scripted(one, "leaving", HOST, tmp_path)
    hire_scripted(one, "gone", HOST, tmp_path)
    one.ok("connection", "expose", "peer", "host", "leaving", "gone")
    one.ok("task", "create", "leaving", "hold on")  # a long turn: retiring it drains it

    def running() -> bool:
        return any(r["state"] == "running" for r in one.get("/runs?agent=leaving")["items"])

    wait_for(running)
    one.ok("agent", "retire", "leaving")
    assert one.get("/agents/leaving")["lifecycle"] == "draining"
    one.ok("agent", "retire", "gone")
    assert one.get("/agents/gone")["lifecycle"] == "retired"
    before = state(one)
    refused = post(
        one,
        token,
        *[
            text_frame(f"t-{name}", 1, f"m-{name}", to_role=name)
            for name in ("hidden", "unknown", "leaving", "gone")
        ],
    )
    assert summary(refused) == [("rejected", None, "unknown_role")] * 4
    assert len({v["detail"].replace(v["message_id"][2:], "") for v in refused}) == 1
    assert state(one) == before


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b'{"frames": []}', 400, "frames"),
        (b'{"frames": [{"type": "text"}]}', 400, "thread_id"),
        (b'{"frames": [], "extra": 1}', 400, "extra"),
        (b'{"frames": [{"type": "ping", "thread_id": "t"}]}', 400, "type"),
    ],
)
def test_a_body_that_is_no_batch_is_refused_whole(
    host: tuple[Installation, str], body: bytes, status: int, says: str
) -> None:
    one, token = host
    before = state(one)
    answer = one.api(
        "POST",
        "/federation/v1/frames",
        token,
        content=body,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    assert answer.status_code == status, answer.text
    assert says in answer.json()["message"]
    assert state(one) == before


def test_frames_with_bad_fields_or_too_many_refuse_the_batch(
    host: tuple[Installation, str],
) -> None:
    one, token = host
    good = text_frame("t1", 1, "m1")
    for bad in (
        good | {"unknown": "field"},
        good | {"seq": 0},
        good | {"thread_id": "has spaces"},
        good | {"message_id": "x" * 65},
        good | {"from_role": "Not-A-Name"},
        good | {"body": ""},
    ):
        answer = one.api("POST", "/federation/v1/frames", token, json={"frames": [good, bad]})
        assert answer.status_code == 400, (bad, answer.text)
    many = [text_frame("t1", n, f"m{n}") for n in range(1, 1002)]
    answer = one.api("POST", "/federation/v1/frames", token, json={"frames": many})
    assert answer.status_code == 400 and "at most 1000 frames" in answer.json()["message"]
    huge = [text_frame("t1", 1, "m1", body="x" * 2_000_000)] * 3
    answer = one.api("POST", "/federation/v1/frames", token, json={"frames": huge})
    assert answer.status_code == 413
    assert agent_conversations(one) == []


def test_a_seq_that_is_not_a_number_refuses_the_batch_naming_it(
    host: tuple[Installation, str],
) -> None:
    """Numbers are numbers on the wire: a seq of "1", true or 1.0 is malformed, not read as 1."""
    one, token = host
    for seq in ("1", True, 1.0):
        bad = text_frame("t1", 1, "m1") | {"seq": seq}
        answer = one.api("POST", "/federation/v1/frames", token, json={"frames": [bad]})
        assert answer.status_code == 400, (seq, answer.text)
        refusal = answer.json()
        assert refusal["error"] == "invalid"
        assert "frames.0.text.seq: Input should be a valid integer" in refusal["message"]
    assert agent_conversations(one) == []


def test_a_close_frame_closes_the_thread_and_later_text_is_refused(
    host: tuple[Installation, str],
) -> None:
    one, token = host
    post(one, token, text_frame("t1", 1, "m1"))
    closing = {"type": "close", "thread_id": "t1", "reason": "its root was deleted"}
    (closed,) = post(one, token, closing)
    assert (closed["thread_id"], closed["verdict"]) == ("t1", "accepted")
    (t1,) = agent_conversations(one)
    assert t1["closed_reason"] == "closed by peer: its root was deleted"
    assert summary(post(one, token, text_frame("t1", 2, "m2"))) == [("rejected", None, "thread")]
    # Closing what is closed or unknown changes nothing.
    again = post(one, token, closing, {"type": "close", "thread_id": "t9", "reason": ""})
    assert [v["verdict"] for v in again] == ["accepted", "accepted"]
    assert agent_conversations(one) == [t1 | {"status": t1["status"]}]


def test_a_batch_mixing_known_and_new_threads_gets_the_verdicts_frames_one_by_one_get(
    host: tuple[Installation, str],
) -> None:
    """Known threads' text is taken together, new threads and closes one by one: within one
    batch, each frame still sees what the frames before it did (a repeat, a close, a seq)."""
    one, token = host
    post(one, token, text_frame("t1", 1, "m1"), text_frame("t2", 1, "n1"))
    closing = {"type": "close", "thread_id": "t1", "reason": "gone"}
    verdicts = post(
        one,
        token,
        text_frame("t1", 2, "m2"),
        text_frame("t3", 1, "o1"),  # a new thread, between known ones
        text_frame("t2", 2, "n2"),
        text_frame("t2", 2, "n2"),  # the same frame twice in one batch
        text_frame("t3", 2, "o2"),
        closing,
        text_frame("t1", 3, "m3"),  # after its thread's close
        text_frame("t2", 4, "n4"),  # a gap, after the close
        text_frame("t2", 3, "n3"),
    )
    assert [(v["verdict"], v.get("original"), v.get("reason")) for v in verdicts] == [
        ("accepted", None, None),
        ("accepted", None, None),
        ("accepted", None, None),
        ("duplicate", "accepted", None),
        ("accepted", None, None),
        ("accepted", None, None),
        ("rejected", None, "thread"),
        ("rejected", None, "invalid"),
        ("accepted", None, None),
    ]
    assert verdicts[7]["expected_seq"] == 3
    bodies = {c["thread_id"]: messages(one, c["id"]) for c in agent_conversations(one)}
    assert {k: [m["body"] for m in v] for k, v in bodies.items()} == {
        "t1": ["text 1", "text 2"],
        "t2": ["text 1", "text 2", "text 3"],
        "t3": ["text 1", "text 2"],
    }
    # Sent again, the batch changes nothing and gets its verdicts again as duplicates.
    again = post(one, token, text_frame("t2", 2, "n2"), text_frame("t1", 3, "m3"))
    assert summary(again) == [("duplicate", "accepted", None), ("duplicate", "rejected", "thread")]


def test_concurrent_copies_of_a_batch_get_one_verdict_and_duplicates_of_it(
    host: tuple[Installation, str],
) -> None:
    """A sender that retries a batch the receiver is still applying (its answer was slow or
    cut) sends a second copy at once: each frame is taken once, and the copy that comes second
    is told 'duplicate' with the first verdict, never that its seq was taken (on PostgreSQL the
    copies really run at once: the second waits on each thread's lock)."""
    one, token = host
    for attempt in range(6):
        frames = [
            text_frame(f"c{attempt}-{n}", seq, f"c{attempt}-{n}-{seq}")
            for n in range(10)
            for seq in (1, 2)
        ]
        answers = _post_twice_at_once(one, token, frames)
        for first, second in zip(*answers, strict=True):
            assert sorted([summary([first])[0], summary([second])[0]]) == [
                ("accepted", None, None),
                ("duplicate", "accepted", None),
            ], (first, second)
    texts = [m["body"] for c in agent_conversations(one) for m in messages(one, c["id"])]
    assert sorted(texts) == sorted(["text 1", "text 2"] * 60)


def test_concurrent_copies_of_a_batch_refusing_new_threads_get_the_first_verdict_again(
    host: tuple[Installation, str],
) -> None:
    """Two copies of a batch whose new threads are refused (nothing is made for them, so no
    thread's lock orders the copies): the second is told 'duplicate' with the first refusal,
    never a conflict of the verdicts' keys."""
    one, token = host
    for attempt in range(6):
        frames = [
            text_frame(f"r{attempt}-{n}", 1, f"r{attempt}-{n}", to_role="nobody") for n in range(10)
        ]
        answers = _post_twice_at_once(one, token, frames)
        for first, second in zip(*answers, strict=True):
            assert sorted([summary([first])[0], summary([second])[0]]) == [
                ("duplicate", "rejected", "unknown_role"),
                ("rejected", None, "unknown_role"),
            ], (first, second)
    assert agent_conversations(one) == []


def _post_twice_at_once(
    at: Installation, token: str, frames: list[dict[str, Any]]
) -> list[list[dict[str, Any]]]:
    start = threading.Barrier(2)
    answers: list[list[dict[str, Any]]] = []

    def copy() -> None:
        start.wait()
        answers.append(post(at, token, *frames))

    copies = [threading.Thread(target=copy) for _ in range(2)]
    for thread in copies:
        thread.start()
    for thread in copies:
        thread.join(timeout=60)
    assert len(answers) == 2
    return answers
