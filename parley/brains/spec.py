"""Brain specs as written on ``--brain``: ``KIND:ARGUMENT``, or ``offline``."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from parley.errors import Invalid

# kind -> what its argument is, for the error message
BRAIN_KINDS = {
    "offline": "nothing: a built-in brain that answers without any model",
    "scripted": "the path of a YAML rule file",
    "openai": "a model name served by an OpenAI-compatible API",
    "anthropic": "an Anthropic model name",
    "command": "the command line of an agent program",
}


@dataclass(frozen=True)
class BrainSpec:
    kind: str
    argument: str

    def __str__(self) -> str:
        return self.kind if not self.argument else f"{self.kind}:{self.argument}"


MAX_BRAIN_SPEC = 4096


def parse_brain_spec(text: str) -> BrainSpec:
    if len(text) > MAX_BRAIN_SPEC:
        raise Invalid(f"a brain spec is at most {MAX_BRAIN_SPEC} characters", field="brain")
    kind, _, argument = text.strip().partition(":")
    if kind not in BRAIN_KINDS:
        known = ", ".join(f"{k}:…" if k != "offline" else k for k in BRAIN_KINDS)
        raise Invalid(f"brain {text!r} is not a brain spec: use one of {known}", field="brain")
    if kind == "offline":
        if argument:
            raise Invalid("brain 'offline' takes no argument", field="brain")
    elif not argument.strip():
        raise Invalid(f"brain {kind!r} needs {BRAIN_KINDS[kind]} after '{kind}:'", field="brain")
    argument = argument.strip()
    if kind == "scripted":
        argument = os.path.normpath(argument)  # one file, one spelling: no ./, ../ or //
    return BrainSpec(kind, argument)


async def check_brain(spec: BrainSpec) -> BrainSpec:
    """What can be checked when hiring, so that a typo fails now and not at the first turn: a
    scripted brain's file must be an absolute path to a valid script (the CLI makes a relative
    one absolute where the operator typed it); a command brain's line must parse and its
    program be on this machine. Runs on the agent's node (parley.node.brain_checks)."""
    # Here, not at the top: the CLI reads this module and should not load YAML and pydantic.
    if spec.kind == "scripted":
        from parley.brains.scripted import load_script

        path = Path(spec.argument)
        if not path.is_absolute():
            raise Invalid(f"scripted brain file {spec.argument!r} must be an absolute path")
        await load_script(path)
    elif spec.kind == "command":
        from parley.brains.command import check_at_hire

        check_at_hire(spec.argument)
    return spec


def command_argv(command_line: str) -> list[str]:
    """A command brain's line as its program and arguments (shell quoting, no shell)."""
    try:
        argv = shlex.split(command_line)
    except ValueError as error:
        raise Invalid(
            f"command brain {command_line!r} is not a command line: {error}", field="brain"
        ) from None
    if not argv:
        raise Invalid("command brain needs a command line", field="brain")
    return argv


def absolute_brain(text: str, cwd: str) -> str:
    """``scripted:FILE`` with FILE made absolute against ``cwd`` (where the operator typed it),
    ``~`` being the operator's home."""
    kind, _, argument = text.partition(":")
    if kind != "scripted" or not argument.strip():
        return text
    path = os.path.expanduser(argument.strip())
    return f"scripted:{os.path.normpath(os.path.join(cwd, path))}"
