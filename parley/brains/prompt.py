"""A turn in words: the system prompt and the new text, as model and command brains read them."""

from __future__ import annotations

from parley.actions.table import ACTIONS
from parley.brains.brain import Said, Turn


def system_prompt(turn: Turn) -> str:
    parts = [turn.engram.strip() or f"You are {turn.agent}, an agent of a Parley installation."]
    parts.append(f"You are {turn.agent}. This turn answers for: {turn.root}.")
    if turn.counterpart:
        parts.append(
            f"You are in a conversation with the agent {turn.counterpart}; to answer it, "
            f"send to {turn.counterpart}. Your plain reply is kept but not sent."
        )
    if turn.memory:
        parts.append("Your memory:\n" + "\n".join(f"- {note}" for note in turn.memory))
    tools = [ACTIONS[name].described() for name in turn.tools if name in ACTIONS]
    parts.append("You act only through these tools:\n" + "\n".join(f"- {t}" for t in tools))
    parts.append("A turn never waits for another agent: its answer arrives later as new text.")
    return "\n\n".join(parts)


def new_text(turn: Turn) -> str:
    lines = []
    if turn.was_stopped:
        lines.append("(Your previous turn was stopped by a person before it finished.)")
    lines.extend(_said(said) for said in turn.new_text)
    return "\n".join(lines)


def transcript(history: list[Said]) -> str:
    return "\n".join(_said(said) for said in history)


def _said(said: Said) -> str:
    return f"{said.author}: {said.text}"
