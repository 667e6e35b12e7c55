"""The brain's boundary, faked: a turn to think about, an action port that records, a sink."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from parley.brains.brain import Said, Turn
from parley.errors import ParleyError

TOOLS = ("send", "report", "spawn", "complete", "remember", "ask_node")


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

    def _act(self, name: str, **args: Any) -> str:
        self.calls.append((name, args))
        if name in self.refusals:
            raise self.refusals[name]
        return f"{name} done (#{len(self.calls)})"

    async def send(self, to: str, text: str) -> str:
        return self._act("send", to=to, text=text)

    async def report(self, text: str) -> str:
        return self._act("report", text=text)

    async def spawn(self, agent: str, text: str, thread: bool = False) -> str:
        return self._act("spawn", agent=agent, text=text, thread=thread)

    async def complete(self, result: str, failed: bool = False) -> str:
        return self._act("complete", result=result, failed=failed)

    async def remember(self, note: str) -> str:
        return self._act("remember", note=note)

    async def ask_node(self, node: str, text: str) -> str:
        return self._act("ask_node", node=node, text=text)


@dataclass
class Chunks:
    """A Stream that keeps what it was given."""

    pieces: list[str] = field(default_factory=list)

    async def __call__(self, chunk: str) -> None:
        self.pieces.append(chunk)
