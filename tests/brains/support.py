"""The brain's boundary, faked: a turn to think about, an action port that records, a sink, and
a model provider whose brains count their clients' closes."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from parley.actions.table import AGENT_TOOLS
from parley.brains.brain import Actions, Brain, Said, Stream, Turn, TurnOutcome
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


Ending = Literal["answers", "fails", "thinks until stopped"]


class FakeModelBrain:
    """A model brain at its paid edge: its provider client counts its closes (one may raise),
    and each of its turns answers, fails, or thinks until stopped."""

    def __init__(self, spec: str, ending: Ending, fails_to_close: bool) -> None:
        self.spec, self.ending, self.fails_to_close = spec, ending, fails_to_close
        self.closes = 0
        self.thinking = asyncio.Event()

    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        self.thinking.set()
        if self.ending == "fails":
            raise RuntimeError("the provider answered nonsense")
        if self.ending == "thinks until stopped":
            await asyncio.Event().wait()
        return TurnOutcome(reply=f"{self.spec} thought")

    async def aclose(self) -> None:
        self.closes += 1
        if self.fails_to_close:
            raise OSError("the connection was already reset")


@dataclass
class FakeProvider:
    """Builds fake model brains, as brain_for builds real ones, and keeps each in order."""

    ending: Ending = "answers"
    fails_to_close: frozenset[str] = frozenset()
    built: list[FakeModelBrain] = field(default_factory=list)

    def __call__(self, spec: str) -> Brain:
        brain = FakeModelBrain(spec, self.ending, spec in self.fails_to_close)
        self.built.append(brain)
        return brain

    def closes(self) -> list[int]:
        return [brain.closes for brain in self.built]
