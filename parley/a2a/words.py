"""Parley's error tree in A2A's words, for the calls answered from the store: the store away (or
a deadlock given up) is the server's failure, ``InternalError``; anything else is what the call
asked for (invalid, unknown, closed), ``InvalidParams``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from a2a.utils.errors import InternalError, InvalidParamsError

from parley.errors import ParleyError, Unavailable
from parley.store import Store, Tx


@contextmanager
def in_a2a_words() -> Iterator[None]:
    """Parley's errors raised inside, as the A2A errors ``a2a_error`` makes of them."""
    try:
        yield
    except ParleyError as error:
        raise a2a_error(error) from error


@asynccontextmanager
async def a2a_transaction(store: Store) -> AsyncIterator[Tx]:
    """A store transaction whose errors are A2A's."""
    with in_a2a_words():
        async with store.transaction() as tx:
            yield tx


def a2a_error(error: ParleyError) -> Exception:
    if isinstance(error, Unavailable):
        return InternalError(message=error.message)
    return InvalidParamsError(message=error.message)
