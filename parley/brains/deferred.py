"""Actions a brain takes at the end of its turn: recorded during the turn and applied by the hub
together with the turn's outcome, in one transaction. For brains that never need an action's
result to go on (the scripted brain): its effects are atomic with its finishing — a refused
action fails the whole turn and nothing of it is applied, and a stopped turn applies nothing.
It also spares a transaction per action."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from parley.actions.arguments import bind
from parley.actions.table import Arguments


@dataclass
class DeferredActions:
    calls: list[tuple[str, Arguments]] = field(default_factory=list)

    async def act(self, name: str, arguments: Mapping[str, object]) -> str:
        # Checked now, as the hub will check them: a malformed call fails the turn here, with
        # its reason, rather than the report of its end.
        self.calls.append((name, bind(name, arguments)))
        return f"{name}: done when this turn ends"
