"""A durable consumer's batch, gathered: what it holds, and what arrives while more is due
(``Gathering``), until the gathering's wait is over or the batch is full. Shared by both
brokers, each with its own way of waiting for what arrives."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from parley.broker.port import DURABLE_BATCH, Gathering

log = logging.getLogger(__name__)

Item = TypeVar("Item")


async def gathered(
    batch: list[Item],
    gathering: Gathering | None,
    data: Callable[[Item], bytes],
    arrivals: Callable[[int, float], Awaitable[list[Item]]],
) -> list[Item]:
    """``batch`` and what ``arrivals(held, seconds)`` brings (what arrived behind the ``held``
    items within ``seconds``, or nothing) while ``gathering`` says more is due."""
    if gathering is None:
        return batch
    loop = asyncio.get_running_loop()
    deadline = loop.time() + gathering.within
    while len(batch) < DURABLE_BATCH and _more_due(gathering, [data(item) for item in batch]):
        left = deadline - loop.time()
        if left <= 0:
            break
        batch = batch + await arrivals(len(batch), left)
    return batch


def _more_due(gathering: Gathering, batch: Sequence[bytes]) -> bool:
    """What the gathering says; one that fails says nothing more is due: the batch is handed
    over as it is, and the consumer lives on."""
    try:
        return gathering.more_due(batch)
    except Exception:
        log.exception("a consumer's gathering failed; its batch goes as it is")
        return False
