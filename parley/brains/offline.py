"""The offline brain: answers without any model, so a fresh installation works out of the box."""

from __future__ import annotations

from parley.brains.brain import Actions, Stream, Turn, TurnOutcome


class OfflineBrain:
    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        heard = " / ".join(said.text for said in turn.new_text)
        reply = f"{turn.agent} here (offline brain: no model configured). I heard: {heard}"
        if turn.counterpart:
            # A reply there would go to the other agent: it never answers one, so no ping-pong.
            return TurnOutcome(reply="")
        await stream(reply)
        return TurnOutcome(reply=reply)
