"""The brain's boundary, faked: a turn to think about, an action port that records, a sink."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from parley.actions.table import AGENT_TOOLS
from parley.brains.brain import Said, Turn
from parley.errors import ParleyError

TOOLS = AGENT_TOOLS


def a_turn(**changes: Any) -> Turn:
    turn = Turn(
        run_id=7,
        agent="alice",
        engram="You are Alice, a careful researcher.",
        memory=["bob prefers short answers"],
        history=[],
        new_text=[Said("carol", "please ask bob for the numbers")],
        root="carol's conversation in #research",
        counterpart=None,
        was_stopped=False,
        brain_session_id=None,
        workspace=None,
        run_token="run-token-7",
        parley_url="http://127.0.0.1:1",
        tools=TOOLS,
    )
    return replace(turn, **changes)


@dataclass
class RecordingActions:
    """Records each action; refuses the ones named in ``refusals`` as the hub would."""

    refusals: dict[str, ParleyError] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        self.calls.append((name, dict(arguments)))
        if name in self.refusals:
            raise self.refusals[name]
        return f"{name} done (#{len(self.calls)})"


@dataclass
class Chunks:
    """A Stream that keeps what it was given."""

    pieces: list[str] = field(default_factory=list)

    async def __call__(self, chunk: str) -> None:
        self.pieces.append(chunk)
