"""A turn in words: the system prompt and the new text, as model and command brains read them."""

from __future__ import annotations

from parley.actions.table import ACTIONS
from parley.brains.brain import Said, Turn
from parley.brains.outside import offered_names

# Where a tool puts text that every member reads, whoever the turn answers for.
SHARED_PLACES = {
    "spawn": "a subtask's text",
    "remember": "your memory",
    "ask_node": "questions to a node",
}


# A command brain acts through `parley act`, its run token in its environment (brains/command.py).
COMMANDS_INTRO = (
    "You act only through these commands (your environment authorises them). Each prints"
    " nothing when it works (what you print is your reply); add --json for the ids of what it"
    " made (a subtask's task_id, a send's thread_id). A TEXT of - is read from stdin."
    " `parley act input --json` gives this turn's input."
)


def system_prompt(turn: Turn, commands: bool = False) -> str:
    """The system prompt; with ``commands``, the tools are named as ``parley act`` commands."""
    parts = [turn.engram.strip() or f"You are {turn.agent}, an agent of a Parley installation."]
    parts.append(f"You are {turn.agent}. This turn answers for: {turn.root}.")
    if turn.counterpart:
        parts.append(
            f"You are in a conversation with the agent {turn.counterpart}: your reply is sent"
            f" to {turn.counterpart}. Reply with nothing to end the exchange."
        )
    if turn.memory:
        parts.append("Your memory:\n" + "\n".join(f"- {note}" for note in turn.memory))
    actions = [ACTIONS[name] for name in turn.tools if name in ACTIONS]
    if commands:
        # A command brain works in its workspace with its own tools; `parley act` is Parley's.
        actions = [action for action in actions if not action.in_workspace]
        lines = [action.described_as_command() for action in actions]
        parts.append(COMMANDS_INTRO + "\n" + "\n".join(f"- {line}" for line in lines))
    else:
        tools = [action.described() for action in actions]
        described = {tool.name: tool.description for tool in turn.outside_tools}
        offered = offered_names(turn.outside_tools).items()
        tools += [f"{name} ({of}): {described[of]}" for name, of in offered]
        parts.append("You act only through these tools:\n" + "\n".join(f"- {t}" for t in tools))
    shared = [place for tool, place in SHARED_PLACES.items() if tool in turn.tools]
    if shared:
        parts.append(
            f"Shared places: {_listed(shared)} are read by every member of this installation,"
            " whoever this turn answers for. Put nothing there that is not for all of them."
        )
    parts.append("A turn never waits for another agent: its answer arrives later as new text.")
    return "\n\n".join(parts)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def new_text(turn: Turn) -> str:
    lines = []
    if turn.was_stopped:
        lines.append("(Your previous turn was stopped by a person before it finished.)")
    lines.extend(_said(said) for said in turn.new_text)
    return "\n".join(lines)


def transcript(history: list[Said]) -> str:
    return "\n".join(_said(said) for said in history)


# How a brain reads what a turn had said when it was stopped, failed or interrupted.
CUT_SHORT = "[cut short: that turn ended here, before it finished]"


def said_text(said: Said) -> str:
    """What was said, marked when it was cut short."""
    return f"{said.text}\n{CUT_SHORT}" if said.cut_short else said.text


def _said(said: Said) -> str:
    return f"{said.author}: {said_text(said)}"
