"""The scripted brain: deterministic rules from a YAML file. The offline workhorse of tests and
demos. Rules are tried in order for each piece of new text; the first that matches acts.

    rules:
      - when: {text: "(?i)status of (?P<thing>\\w+)", from: ada}   # both optional
        do:
          - reply: "Looking into {thing} for {sender}"
          - send: {to: bob, text: "what is the status of {thing}?"}
      - when: {from: bob}
        do:
          - report: "bob says: {text}"
          - complete: "{text}"
    otherwise:
      - reply: "I only know about status."

Acts: reply, sleep SECONDS, wait_for FILE (holds the turn until FILE exists: a gate a test or a
demo opens), and each action of ``parley.actions.table`` with its parameters:
send {to, text}, report, spawn {agent, text, thread}, complete (text, or {result, failed}),
remember, ask_node {node, text}. A single value instead of a mapping is the action's first
parameter (``report: TEXT``). Text may use {text}, {sender}, {agent}, {root} and the named groups
of the rule's pattern.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from stat import S_ISREG
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from parley.actions.arguments import check_names
from parley.actions.table import ACTIONS, Action, Kind
from parley.brains.brain import Actions, Said, Stream, Turn, TurnOutcome
from parley.errors import Invalid


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class When(_Model):
    text: str | None = None
    from_: str | None = Field(None, alias="from")

    @field_validator("text")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value


class Rule(_Model):
    when: When = When()
    do: list[dict[str, Any]]


class Script(_Model):
    rules: list[Rule] = []
    otherwise: list[dict[str, Any]] = []


ACTS = ("reply", *ACTIONS, "sleep", "wait_for")
GATE_LOOK_SECONDS = 0.01


MAX_SCRIPT_BYTES = 256 * 1024

_parsed: dict[tuple[Path, int, int], Script] = {}


async def load_script(path: Path) -> Script:
    """Read and check a rule file; every problem is one Invalid line naming the file and, where
    it can, the line, never quoting the file's contents (it may be any file the server can
    read). A file is parsed once per version (path, modification time, size), so an edit
    applies at the next turn; reading it happens off the event loop."""
    stat = _stat(path)
    version = (path, stat.st_mtime_ns, stat.st_size)
    if version not in _parsed:
        script = _parse(path, await asyncio.to_thread(_read, path))
        if len(_parsed) > 256:
            _parsed.clear()
        _parsed[version] = script
    return _parsed[version]


def _stat(path: Path) -> os.stat_result:
    try:
        stat = path.stat()
    except OSError as exc:
        raise _invalid(path, exc.strerror or "cannot be read") from exc
    if not S_ISREG(stat.st_mode):
        raise _invalid(path, "is not a regular file")
    if stat.st_size > MAX_SCRIPT_BYTES:
        raise _invalid(path, f"is larger than {MAX_SCRIPT_BYTES // 1024} KiB")
    return stat


def _read(path: Path) -> str:
    # Non-blocking open: a FIFO put in the file's place since the stat must not hang us.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise _invalid(path, exc.strerror or "cannot be read") from exc
    with os.fdopen(fd, "rb") as file:
        if not S_ISREG(os.fstat(fd).st_mode):
            raise _invalid(path, "is not a regular file")
        data = file.read(MAX_SCRIPT_BYTES + 1)
    if len(data) > MAX_SCRIPT_BYTES:
        raise _invalid(path, f"is larger than {MAX_SCRIPT_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _invalid(path, f"is not UTF-8 text (byte {exc.start})") from None


def _parse(path: Path, text: str) -> Script:
    try:
        tree = yaml.compose(text)
        raw = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise _invalid(path, f"is not a valid script: {where}not YAML: {exc.problem}") from None
    except yaml.YAMLError:
        raise _invalid(path, "is not a valid script: not YAML") from None
    try:
        script = Script.model_validate(raw or {})
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        raise _invalid(
            path, "is not a valid script: " + _at(tree, first["loc"], first["msg"])
        ) from None
    _check_acts(path, tree, script)
    return script


def _check_acts(path: Path, tree: yaml.Node | None, script: Script) -> None:
    acts: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [
        (("rules", r, "do", a), act)
        for r, rule in enumerate(script.rules)
        for a, act in enumerate(rule.do)
    ]
    acts += [(("otherwise", a), act) for a, act in enumerate(script.otherwise)]
    for loc, act in acts:
        if len(act) != 1 or next(iter(act)) not in ACTS:
            problem = _at(tree, loc, f"each act is one of {', '.join(ACTS)}")
            raise _invalid(path, f"is not a valid script: {problem}")
        ((name, argument),) = act.items()
        if name in ACTIONS:
            try:
                check_names(ACTIONS[name], _given(ACTIONS[name], argument))
            except Invalid as exc:
                problem = _at(tree, loc, exc.message)
                raise _invalid(path, f"is not a valid script: {problem}") from None


def _at(tree: yaml.Node | None, loc: tuple[int | str, ...], problem: str) -> str:
    """``problem`` with where it is: the YAML line of ``loc`` and its path in the script."""
    node, line = tree, None
    for step in loc:
        node = _child(node, step)
        if node is None:
            break
        line = node.start_mark.line + 1
    where = ".".join(str(step) for step in loc)
    return f"line {line}: {where}: {problem}" if line else f"{where}: {problem}"


def _child(node: yaml.Node | None, step: int | str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if key.value == step), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
        child: yaml.Node = node.value[step]
        return child
    return None


def _invalid(path: Path, problem: str) -> Invalid:
    return Invalid(f"scripted brain file {path} {problem}", field="brain")


class ScriptedBrain:
    # A rule never needs an action's result to go on: its actions are applied with the turn's
    # outcome, atomically (see brains/deferred.py).
    acts_at_end = True

    def __init__(self, path: Path) -> None:
        self.path = path

    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        script = await load_script(self.path)  # an edited script applies at the next turn
        replies: list[str] = []
        for said in turn.new_text:
            acts, values = _choose(script, said, turn)
            for act in acts:
                await _perform(act, values, turn, actions, replies, stream)
        return TurnOutcome(reply="\n".join(replies))


def _choose(script: Script, said: Said, turn: Turn) -> tuple[list[dict[str, Any]], dict[str, str]]:
    values = {"text": said.text, "sender": said.author, "agent": turn.agent, "root": turn.root}
    for rule in script.rules:
        if rule.when.from_ is not None and rule.when.from_ != said.author:
            continue
        match = re.search(rule.when.text, said.text) if rule.when.text else None
        if rule.when.text and match is None:
            continue
        groups = {k: v or "" for k, v in match.groupdict().items()} if match else {}
        return rule.do, values | groups
    return script.otherwise, values


async def _perform(
    act: dict[str, Any],
    values: dict[str, str],
    turn: Turn,
    actions: Actions,
    replies: list[str],
    stream: Stream,
) -> None:
    ((name, argument),) = act.items()
    fill = _Filler(values)
    if name == "sleep":
        await asyncio.sleep(float(argument))
    elif name == "wait_for":
        await _wait_for(Path(str(argument)))
    elif name == "reply":
        text = fill(argument)  # goes where every brain's reply goes (hub/outcomes.py)
        if not turn.counterpart:  # a person may be following; another agent reads it once sent
            await stream(f"\n{text}" if replies else text)  # the pieces add up to the reply
        replies.append(text)
    else:
        await actions.act(name, _arguments(ACTIONS[name], argument, fill))


async def _wait_for(gate: Path) -> None:
    """Until the file ``gate`` exists; it is looked at off the event loop."""
    # A file another process may create is the gate, not an event of ours.
    while not await asyncio.to_thread(gate.exists):  # noqa: ASYNC110
        await asyncio.sleep(GATE_LOOK_SECONDS)


def _given(action: Action, argument: Any) -> dict[str, Any]:
    """An act's arguments: a mapping, or one value for the action's first parameter."""
    if isinstance(argument, dict):
        return {str(key): value for key, value in argument.items()}
    return {action.params[0].name: argument}


def _arguments(action: Action, argument: Any, fill: _Filler) -> dict[str, Any]:
    # A flag stays as written (the table refuses one that is not a boolean); text is filled in.
    flags = {p.name for p in action.params if p.kind is Kind.FLAG}
    given = _given(action, argument)
    return {key: value if key in flags else fill(value) for key, value in given.items()}


class _Filler:
    """Fills {placeholders}; unknown ones are left as written rather than failing the turn."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def __call__(self, template: Any) -> str:
        return str(template).format_map(_Leave(self._values))


class _Leave(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
