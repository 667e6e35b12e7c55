"""Actions a brain takes at the end of its turn: recorded during the turn and applied by the hub
together with the turn's outcome, in one transaction. For brains that never need an action's
result to go on (the scripted brain): its effects are atomic with its finishing — a refused
action fails the whole turn and nothing of it is applied, and a stopped turn applies nothing.
It also spares a transaction per action."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class DeferredActions:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def _record(self, name: str, **arguments: Any) -> str:
        self.calls.append((name, arguments))
        return f"{name}: done when this turn ends"

    async def send(self, to: str, text: str) -> str:
        return self._record("send", to=to, text=text)

    async def report(self, text: str) -> str:
        return self._record("report", text=text)

    async def spawn(self, agent: str, text: str, thread: bool = False) -> str:
        return self._record("spawn", agent=agent, text=text, thread=thread)

    async def complete(self, result: str, failed: bool = False) -> str:
        return self._record("complete", result=result, failed=failed)

    async def remember(self, note: str) -> str:
        return self._record("remember", note=note)

    async def ask_node(self, node: str, text: str) -> str:
        return self._record("ask_node", node=node, text=text)
