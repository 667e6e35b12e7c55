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

Acts: reply, send {to, text}, report, spawn {agent, text, thread}, complete (text, or {result,
failed}), remember, ask_node {node, text}, sleep SECONDS. Text may use {text}, {sender},
{agent}, {root} and the named groups of the rule's pattern.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
                raise ValueError(f"{value!r} is not a regular expression: {exc}") from exc
        return value


class Rule(_Model):
    when: When = When()
    do: list[dict[str, Any]]


class Script(_Model):
    rules: list[Rule] = []
    otherwise: list[dict[str, Any]] = []


ACTS = ("reply", "send", "report", "spawn", "complete", "remember", "ask_node", "sleep")


_parsed: dict[tuple[Path, int, int], Script] = {}


def load_script(path: Path) -> Script:
    """Read and check a rule file; every problem is an Invalid naming the file. A file is parsed
    once per version (path, modification time, size), so an edit applies at the next turn."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise Invalid(f"scripted brain file {path}: {exc.strerror}", field="brain") from exc
    version = (path, stat.st_mtime_ns, stat.st_size)
    if version not in _parsed:
        if len(_parsed) > 256:
            _parsed.clear()
        _parsed[version] = _parse(path)
    return _parsed[version]


def _parse(path: Path) -> Script:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        script = Script.model_validate(raw or {})
    except OSError as exc:
        raise Invalid(f"scripted brain file {path}: {exc.strerror}", field="brain") from exc
    except (yaml.YAMLError, ValidationError) as exc:
        raise Invalid(
            f"scripted brain file {path} is not a valid script: {exc}", field="brain"
        ) from exc
    for act in [act for rule in script.rules for act in rule.do] + script.otherwise:
        if len(act) != 1 or next(iter(act)) not in ACTS:
            raise Invalid(
                f"scripted brain file {path}: each act is one of {', '.join(ACTS)}; got {act!r}",
                field="brain",
            )
    return script


class ScriptedBrain:
    # A rule never needs an action's result to go on: its actions are applied with the turn's
    # outcome, atomically (see brains/deferred.py).
    acts_at_end = True

    def __init__(self, path: Path) -> None:
        self.path = path

    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        script = load_script(self.path)  # an edited script applies at the next turn
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
    elif name == "reply":
        text = fill(argument)
        if turn.counterpart:
            await actions.send(turn.counterpart, text)
        else:
            await stream(f"\n{text}" if replies else text)  # the pieces add up to the reply
            replies.append(text)
    elif name == "send":
        await actions.send(fill(argument["to"]), fill(argument["text"]))
    elif name == "report":
        await actions.report(fill(argument))
    elif name == "spawn":
        await actions.spawn(
            fill(argument["agent"]), fill(argument["text"]), bool(argument.get("thread", False))
        )
    elif name == "complete":
        if isinstance(argument, dict):
            await actions.complete(
                fill(argument.get("result", "")), bool(argument.get("failed", False))
            )
        else:
            await actions.complete(fill(argument))
    elif name == "remember":
        await actions.remember(fill(argument))
    elif name == "ask_node":
        await actions.ask_node(fill(argument["node"]), fill(argument["text"]))


class _Filler:
    """Fills {placeholders}; unknown ones are left as written rather than failing the turn."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values

    def __call__(self, template: Any) -> str:
        return str(template).format_map(_Leave(self._values))


class _Leave(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"
