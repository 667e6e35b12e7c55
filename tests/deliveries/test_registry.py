"""One registry of delivery kinds (``deliveries/deliverers.py``): the channels contribute theirs
and federation its frames, which a sender of their own claims and sends; the outbox worker
routes only the others."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from parley.clock import Clock
from parley.deliveries.deliverers import Deliverers
from parley.deliveries.local import TaskCompletionDeliverer
from parley.deliveries.model import Delivery, DeliveryState, TaskCompletion
from parley.errors import Invalid
from parley.federation.model import FRAME_KIND
from parley.store import Tx
from tests.support import Harness


class Told:
    def __init__(self) -> None:
        self.reasons: list[str] = []

    async def undeliverable(self, tx: Tx, clock: Clock, payload: object, reason: str) -> None:
        self.reasons.append(reason)


def _item(kind: str) -> Delivery:
    now = datetime(2026, 12, 5, tzinfo=UTC)
    return Delivery(1, "k", kind, "{}", DeliveryState.PENDING, 0, now, None, None, None, None,
                    now, None)  # fmt: skip


async def test_the_runtime_s_registry_holds_the_channels_kinds_and_federation_s_frames(
    parley: Harness,
) -> None:
    registry = parley.context.runtime.deliverers
    assert FRAME_KIND in registry.kinds
    assert {"task_completion", "channel_post", "channel_thread"} <= set(registry.kinds)
    with pytest.raises(Invalid, match="sender of its own"):  # never the outbox worker's
        registry.route(_item(FRAME_KIND))


def test_a_kind_is_registered_once_whoever_contributes_it() -> None:
    told = Told()
    registry = Deliverers().add_own("frame", told)
    assert registry.fate_of("frame") is told
    with pytest.raises(ValueError, match="registered already"):
        registry.add_own("frame", Told())
    registry.add_local(TaskCompletion, TaskCompletionDeliverer())
    with pytest.raises(ValueError, match="registered already"):
        registry.add_own(TaskCompletion.kind, told)
    with pytest.raises(Invalid, match="no deliverer"):
        registry.route(_item("unheard_of"))
