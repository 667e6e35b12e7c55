"""Finding an agent by name, with the message a person expects when it is not there: the
names they may have meant."""

from __future__ import annotations

from difflib import get_close_matches

from parley.agents.model import Agent
from parley.errors import NotFound
from parley.store import Tx


async def agent_by_name(tx: Tx, name: str) -> Agent:
    agent = await tx.agents.by_name(name)
    if agent is None:
        raise NotFound(f"no agent named {name!r}{await _suggestion(tx, name)}", field="agent")
    return agent


async def _suggestion(tx: Tx, name: str) -> str:
    """ "; did you mean 'scribe'?" for 'Scribe' or 'scrbe': the same name in another case first,
    then the names close to it."""
    names = await tx.agents.names()
    same = [known for known in names if known.casefold() == name.casefold()]
    close = same or get_close_matches(name.casefold(), names, n=3, cutoff=0.75)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(known) for known in close) + "?"
