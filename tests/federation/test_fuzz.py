"""The frame parser and the receiver, fuzzed (in process, through the app's real HTTP edge):
whatever a peer posts, the answer is a verdict per frame or a refusal of the whole body, and
what changes is exactly what was accepted."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from parley.store.tables import messages, received_frames
from parley.tokens import hash_token, new_peer_token
from tests.support import Harness, bearer

PRINTABLE = st.characters(blacklist_characters="\x00", blacklist_categories=["Cs"])


def _frames(ids: Any, seqs: Any, names: Any, bodies: Any, extra: dict[str, Any]) -> Any:
    text = st.fixed_dictionaries(
        {
            "type": st.just("text"),
            "thread_id": ids,
            "seq": seqs,
            "message_id": st.sampled_from(["m1", "m2", "m3", "m4", "m5", "m6"]),
            "from_role": names,
            "to_role": names,
            "body": bodies,
        },
        optional=extra,
    )
    close = st.fixed_dictionaries(
        {"type": st.just("close"), "thread_id": ids, "reason": st.text(PRINTABLE, max_size=10)}
    )
    return st.fixed_dictionaries({"frames": st.lists(text | close, min_size=1, max_size=6)})


# Frames of the right shape, in every order and repetition: the receiver's verdicts.
BATCHES = _frames(
    st.sampled_from(["t1", "t2", "t3"]),
    st.integers(min_value=1, max_value=4),
    st.sampled_from(["visitor", "host", "nobody"]),
    st.text(PRINTABLE, min_size=1, max_size=20),
    {},
).map(json.dumps)
# Anything at all: the parser's refusals.
JUNK_FRAMES = _frames(
    st.sampled_from(["t1", "bad id", "x" * 65, ""]),
    st.integers(min_value=-1, max_value=2**40),
    st.sampled_from(["visitor", "host", "Bad", ""]),
    st.text(max_size=20),
    {"extra": st.just(1)},
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)
BODIES = JUNK_FRAMES.map(json.dumps) | JSON.map(json.dumps) | st.text(max_size=40)


class Peer:
    def __init__(self, parley: Harness, token: str) -> None:
        self.parley, self.token = parley, token

    async def post(self, body: str) -> Any:
        async with self.parley.client() as http:
            return await http.post(
                "/federation/v1/frames",
                content=body.encode("utf-8", "surrogatepass"),
                headers=bearer(self.token) | {"Content-Type": "application/json"},
            )

    async def counts(self) -> tuple[int, int]:
        """Text from the peer, and frames kept for dedup."""
        async with self.parley.context.store.transaction() as tx:
            said = select(func.count()).where(messages.c.author_role.is_not(None))
            kept = select(func.count()).select_from(received_frames)
            return (
                int((await tx.connection.execute(said)).scalar_one()),
                int((await tx.connection.execute(kept)).scalar_one()),
            )


@pytest.fixture
async def peer(parley: Harness, tmp_path: Path) -> AsyncIterator[Peer]:
    rules = tmp_path / "quiet.yaml"
    rules.write_text("otherwise: []\n")
    await parley.hire("host", brain=f"scripted:{rules}")
    token = new_peer_token()
    async with parley.context.store.transaction() as tx:
        connection = await tx.connections.add(
            "peer", "http://127.0.0.1:9", hash_token(token), "ppt_unused", parley.clock.now(), None
        )
        host = await tx.agents.by_name("host")
        assert host is not None
        await tx.connections.expose(connection.id, [host.id])
    yield Peer(parley, token)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=BATCHES)
async def test_a_batch_gets_a_verdict_per_frame_and_changes_only_what_it_accepted(
    peer: Peer, body: str
) -> None:
    await _check(peer, body)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=BODIES)
async def test_any_body_gets_verdicts_or_a_refusal_and_changes_only_what_it_accepted(
    peer: Peer, body: str
) -> None:
    await _check(peer, body)


async def _check(peer: Peer, body: str) -> None:
    said_before, kept_before = await peer.counts()
    answer = await peer.post(body)
    event(f"answered {answer.status_code}")
    said_after, kept_after = await peer.counts()
    if answer.status_code != 200:
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"] == "invalid" and answer.json()["message"], (body, answer.text)
        assert (said_after, kept_after) == (said_before, kept_before)
        return
    frames = json.loads(body)["frames"]
    verdicts = answer.json()["verdicts"]
    assert len(verdicts) == len(frames)
    accepted = 0
    for frame, verdict in zip(frames, verdicts, strict=True):
        if frame["type"] == "close":
            assert verdict == {"thread_id": frame["thread_id"], "verdict": "accepted"} | {
                k: None for k in ("message_id", "original", "reason", "detail", "expected_seq")
            }
            continue
        assert verdict["message_id"] == frame["message_id"]
        assert verdict["verdict"] in {"accepted", "duplicate", "rejected"}
        if verdict["verdict"] == "duplicate":
            assert verdict["original"] in {"accepted", "rejected"}
        if verdict["verdict"] == "rejected":
            assert verdict["reason"] in {"thread", "roles", "unknown_role", "invalid"}
            assert verdict["detail"]
            if verdict["expected_seq"] is not None:  # a gap: the thread goes on from there
                assert "from the future" in verdict["detail"]
                assert verdict["expected_seq"] < frame["seq"]
        accepted += verdict["verdict"] == "accepted"
    assert said_after - said_before == accepted
    assert kept_after - kept_before <= sum(f["type"] == "text" for f in frames)
