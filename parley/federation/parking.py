"""How long a thread's text waits when the peer has it sent again from an earlier seq (a gap
there), and when it is parked. A peer that keeps answering so — restored from a backup and
confused, or broken — would otherwise have the thread sent again at once, for ever. Each resend
waits longer (with jitter, so that threads do not come back together); past ``PARK_AFTER`` the
thread is parked: tried again once every ``PARKED_FOR``, shown in ``connection list`` with its
reason. The connection's other threads go on all the while."""

from __future__ import annotations

from datetime import timedelta

from parley.deliveries.backoff import Backoff, equal_jitter

RESEND_BACKOFF = Backoff(base_seconds=1.0, cap_seconds=120.0, draw=equal_jitter)
PARK_AFTER = 8  # resends of one frame
PARKED_FOR = timedelta(hours=1)


def resend_delay(resends: int, backoff: Backoff = RESEND_BACKOFF) -> timedelta:
    """How long a frame sent again for the ``resends``-th time waits."""
    return PARKED_FOR if parked(resends) else backoff.delay(resends)


def parked(resends: int) -> bool:
    return resends >= PARK_AFTER


def resend_reason(expected_seq: int, resends: int) -> str:
    if parked(resends):
        return (
            f"parked: the peer asked {resends} times for this thread again from seq"
            f" {expected_seq}; tried again every {int(PARKED_FOR.total_seconds() // 60)} min"
        )
    return f"the peer expects seq {expected_seq} first: sent again from there ({resends}x)"
