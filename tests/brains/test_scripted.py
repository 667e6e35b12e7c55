"""The scripted brain's acts are the table's actions: checked when the file is read, their
arguments filled in and checked again as every action's are."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from parley.brains.deferred import DeferredActions
from parley.brains.scripted import ScriptedBrain, load_script
from parley.errors import Invalid
from tests.brains.support import Chunks, a_turn
from tests.support import eventually


def _rules(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    ("act", "refusal"),
    [
        ("send: {to: bob}", "send needs text"),
        ("remember: {note: x, colour: red}", "remember takes no argument 'colour'"),
        (
            "shout: hello",
            "each act is one of reply, send, report, spawn, complete, remember, ask_node, read,"
            " list, find, write, edit, run, sleep, wait_for",
        ),
    ],
)
async def test_a_rule_file_with_a_malformed_act_is_refused_when_read(
    tmp_path: Path, act: str, refusal: str
) -> None:
    path = _rules(tmp_path, f"otherwise: [{{{act}}}]")
    with pytest.raises(Invalid) as refused:
        await load_script(path)
    assert refused.value.message.startswith(f"scripted brain file {path}")
    assert refusal in refused.value.message


async def test_acts_become_the_table_s_actions_a_single_value_its_first_parameter(
    tmp_path: Path,
) -> None:
    path = _rules(
        tmp_path,
        """
        otherwise:
          - report: "{sender} asked: {text}"
          - spawn: {agent: bob, text: "{text}", thread: true}
          - complete: done
          - ask_node: {node: local, text: "busy?"}
        """,
    )
    actions = DeferredActions()
    await ScriptedBrain(path).think(a_turn(), actions, Chunks())
    assert actions.calls == [
        ("report", {"text": "carol asked: please ask bob for the numbers"}),
        ("spawn", {"agent": "bob", "text": "please ask bob for the numbers", "thread": True}),
        ("complete", {"result": "done", "failed": False}),
        ("ask_node", {"node": "local", "text": "busy?"}),
    ]


async def test_a_flag_that_is_not_a_boolean_fails_the_turn_saying_so(tmp_path: Path) -> None:
    path = _rules(tmp_path, 'otherwise: [{spawn: {agent: bob, text: x, thread: "yes"}}]')
    with pytest.raises(Invalid) as refused:
        await ScriptedBrain(path).think(a_turn(), DeferredActions(), Chunks())
    assert refused.value.message == 'spawn: thread must be a boolean, not "yes"'


async def test_wait_for_holds_the_turn_until_its_file_exists(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    rules = f"otherwise: [{{reply: before}}, {{wait_for: '{gate}'}}, {{reply: through}}]"
    chunks = Chunks()
    brain = ScriptedBrain(_rules(tmp_path, rules))
    thinking = asyncio.create_task(brain.think(a_turn(), DeferredActions(), chunks))

    async def reached_the_gate() -> bool:
        return chunks.pieces == ["before"]

    assert await eventually(reached_the_gate)
    # Nothing between the first reply and the gate waits: a turn past it would have ended.
    assert not thinking.done()
    gate.touch()
    outcome = await asyncio.wait_for(thinking, 10)
    assert (outcome.reply, chunks.pieces) == ("before\nthrough", ["before", "\nthrough"])
