"""The bound delivery router's rules, over random bindings and requesters (hypothesis), and
each reason on a case of its own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.channels.model import (
    BindingStatus,
    BindingTargetKind,
    ConversationRef,
    SessionBindingRecord,
)
from parley.channels.router import DeliveryMode, resolve_destination

AT = datetime(2026, 11, 1, tzinfo=UTC)
SESSIONS = ["topic:1", "topic:2"]

refs = st.builds(
    ConversationRef,
    channel=st.sampled_from(["web", "discord"]),
    account_id=st.sampled_from(["a", "b"]),
    conversation_id=st.sampled_from(["c1", "c2", "t1", "t2", "t3"]),
    parent_conversation_id=st.sampled_from([None, "c1", "c2"]),
)


def binding(
    binding_id: int,
    ref: ConversationRef,
    session: str = "topic:1",
    status: BindingStatus = BindingStatus.ACTIVE,
) -> SessionBindingRecord:
    return SessionBindingRecord(
        binding_id=binding_id,
        target_session_key=session,
        target_kind=BindingTargetKind.SUBAGENT,
        conversation=ref,
        status=status,
        bound_at=AT,
        expires_at=None,
        bound_by="person:owner",
        last_activity_at=AT,
        idle_timeout=None,
        max_age=None,
    )


@st.composite
def binding_sets(draw: st.DrawFn) -> list[SessionBindingRecord]:
    """Bindings as the store keeps them: at most one live binding per conversation."""
    found: list[SessionBindingRecord] = []
    for index, ref in enumerate(draw(st.lists(refs, max_size=6))):
        status = draw(st.sampled_from(list(BindingStatus)))
        live = status is not BindingStatus.ENDED
        if live and any(
            b.status is not BindingStatus.ENDED and b.conversation.same_conversation(ref)
            for b in found
        ):
            continue
        found.append(binding(index + 1, ref, draw(st.sampled_from(SESSIONS)), status))
    return found


@given(
    bindings=binding_sets(),
    requester=st.one_of(st.none(), refs),
    fail_closed=st.booleans(),
    order=st.randoms(use_true_random=False),
)
def test_the_rules_hold_over_any_bindings_and_requester(
    bindings: list[SessionBindingRecord],
    requester: ConversationRef | None,
    fail_closed: bool,
    order: object,
) -> None:
    chosen = resolve_destination("task_completion", "topic:1", requester, fail_closed, bindings)
    active = [b for b in bindings if b.is_active and b.target_session_key == "topic:1"]
    # bound exactly when a binding is chosen, and only ever one of this session's active ones
    assert (chosen.mode is DeliveryMode.BOUND) == (chosen.binding is not None)
    if chosen.binding is not None:
        assert chosen.binding in active
    if not active:
        assert (chosen.mode, chosen.reason) == (DeliveryMode.FALLBACK, "no-active-binding")
    if requester is None and fail_closed and active:
        assert (chosen.mode, chosen.reason) == (DeliveryMode.FALLBACK, "missing-requester")
    if requester is not None and chosen.binding is not None:
        # never a conversation of another channel account than the requester's
        assert chosen.binding.conversation.account == requester.account
    exact = [b for b in active if requester and b.conversation.same_conversation(requester)]
    if exact:
        assert chosen.binding == exact[0] and chosen.reason == "exact-conversation"
    # the order the bindings come in changes nothing
    shuffled = list(bindings)
    order.shuffle(shuffled)  # type: ignore[attr-defined]
    assert resolve_destination("task_completion", "topic:1", requester, fail_closed, shuffled) == (
        chosen
    )


MAIN = ConversationRef("web", "home", "c1")
THREAD_A = ConversationRef("web", "home", "t1", "c1")
THREAD_B = ConversationRef("web", "home", "t2", "c1")


@pytest.mark.parametrize(
    ("bindings", "requester", "fail_closed", "expected"),
    [
        ([], MAIN, False, (None, "fallback", "no-active-binding")),
        ([binding(1, THREAD_A, status=BindingStatus.ENDED)], MAIN, False,
         (None, "fallback", "no-active-binding")),
        ([binding(1, THREAD_A, session="topic:2")], MAIN, False,
         (None, "fallback", "no-active-binding")),
        ([binding(1, THREAD_A)], None, True, (None, "fallback", "missing-requester")),
        ([binding(1, THREAD_A)], None, False, (1, "bound", "single-binding")),
        ([binding(1, THREAD_A), binding(2, THREAD_B)], None, False,
         (None, "fallback", "ambiguous-without-requester")),
        ([binding(1, THREAD_A)], {"channel": "web"}, False,
         (None, "fallback", "invalid-requester")),
        ([binding(1, THREAD_A)], {"channel": "web", "account_id": "home",
                                  "conversation_id": "c1"}, False,
         (1, "bound", "requester-thread")),
        ([binding(1, THREAD_A), binding(2, THREAD_B)], THREAD_B, True,
         (2, "bound", "exact-conversation")),
        ([binding(1, THREAD_A)], MAIN, True, (1, "bound", "requester-thread")),
        ([binding(1, ConversationRef("web", "home", "t9", "c7"))], MAIN, True,
         (1, "bound", "requester-account")),
        ([binding(1, THREAD_A), binding(2, THREAD_B)], MAIN, True,
         (None, "fallback", "no-requester-match")),
        ([binding(1, ConversationRef("discord", "home", "t1", "c1"))], MAIN, False,
         (None, "fallback", "no-requester-match")),
    ],
)  # fmt: skip
def test_each_reason(
    bindings: list[SessionBindingRecord],
    requester: object,
    fail_closed: bool,
    expected: tuple[int | None, str, str],
) -> None:
    chosen = resolve_destination("task_completion", "topic:1", requester, fail_closed, bindings)  # type: ignore[arg-type]
    chosen_id = chosen.binding.binding_id if chosen.binding else None
    assert (chosen_id, chosen.mode.value, chosen.reason) == expected


def test_only_task_completions_are_routed_here() -> None:
    with pytest.raises(ValueError, match="only task_completion"):
        resolve_destination("spawn_ack", "topic:1", MAIN, False, [])
