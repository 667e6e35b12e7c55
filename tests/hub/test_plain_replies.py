"""Replies in local agent conversations recorded together (``hub/plain_replies.py``): what a batch
of them leaves is what recording each alone leaves, and any end that could be refused goes the
one-by-one way, where it is refused as before."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from parley.hub.outcomes import Outcome
from parley.hub.plain_replies import take_plain
from parley.hub.recorder import OutcomeRecorder
from parley.node.messages import ActionCall
from parley.settings import Settings
from parley.tokens import hash_token
from tests.runs.support import HOLD_ONCE, get, get_all, say, script
from tests.support import Harness, ManualClock, eventually, items, started

# Asks its holder once; takes the answer without a word (an empty reply ends the exchange).
ASKER = """
    rules:
      - when: {from: HOLDER}
        do: [{sleep: 0}]
    otherwise:
      - send: {to: HOLDER, text: "a question"}
"""


@dataclass(frozen=True)
class Held:
    """A holder's turn held open in its agent conversation with the asker that asked it."""

    asker: str
    holder: str
    run_id: int
    token: str
    topic_id: int

    def end(self, text: str, **fields: Any) -> Outcome:
        started_as = hash_token(self.token)
        return Outcome(
            self.run_id, True, text, run_token=self.token, started_as=started_as, **fields
        )


async def hold_in_agent_conversation(parley: Harness, tmp_path: Path, n: int) -> Held:
    holder, asker = f"holder{n}", f"asker{n}"
    program = tmp_path / "hold_once.py"
    program.write_text(HOLD_ONCE)
    hired = await parley.hire(holder, brain=f"command:{sys.executable} {program}")
    await parley.hire(asker, brain=script(tmp_path, asker, ASKER.replace("HOLDER", holder)))
    await say(parley.owner, asker, "go")
    token_file = Path(hired["workspace"]) / "token"

    async def holding() -> bool:
        return token_file.exists() and bool(token_file.read_text())

    assert await eventually(holding)
    [run] = items(await get(parley.owner, f"/runs?agent={holder}"))
    return Held(asker, holder, run["id"], token_file.read_text(), run["topic_id"])


def recorder_of(parley: Harness) -> OutcomeRecorder:
    return OutcomeRecorder(parley.context.store, parley.clock, parley.context.runtime.budget)


async def settled(parley: Harness) -> bool:
    runs = await get_all(parley.owner, "/runs")
    return all(run["state"] not in ("queued", "running") for run in runs)


async def left_by(parley: Harness, held: Held) -> dict[str, Any]:
    """What recording the holder's end left, in words that do not name the pair."""

    def role(name: str | None) -> str | None:
        return {held.asker: "asker", held.holder: "holder"}.get(name or "", name)

    run = (await get(parley.owner, f"/runs/{held.run_id}"))["run"]
    asker_runs = list(reversed(await get_all(parley.owner, f"/runs?agent={held.asker}")))
    shown = list(reversed(items(await get(parley.owner, f"/topics/{held.topic_id}/messages"))))
    async with parley.context.store.transaction() as tx:
        holder = await tx.agents.by_name(held.holder)
        assert holder is not None
        holder_id = holder.id
        inputs = [await tx.messages.inputs(asker_run["id"]) for asker_run in asker_runs[1:]]
    return {
        "run": (run["state"], run["output"], run["reason"]),
        "asker_runs": [(r["state"], r["topic_id"] == held.topic_id) for r in asker_runs],
        "conversation": [
            (m["kind"], role(m["author"]), role(m["recipient"]), m["body"]) for m in shown
        ],
        "asker_inputs": [
            [
                (m.kind, role(m.recipient), m.body, m.author_agent_id == holder_id,
                 m.from_run_id == held.run_id)
                for m in taken
            ]
            for taken in inputs
        ],
    }  # fmt: skip


async def test_a_batch_of_replies_leaves_what_recording_each_alone_leaves(
    parley: Harness, tmp_path: Path
) -> None:
    held = [await hold_in_agent_conversation(parley, tmp_path, n) for n in range(8)]
    ends = [h.end("the answer") for h in held]
    recorder = recorder_of(parley)
    for end in ends[:4]:  # each alone, as before batches were recorded together
        await recorder._record([end], {}, set(), plain=False)
    await recorder.record(ends[4:] + ends[4:])  # together, every end twice
    assert await eventually(lambda: settled(parley))
    alone, together = (
        [await left_by(parley, h) for h in held[:4]],
        [await left_by(parley, h) for h in held[4:]],
    )
    assert together == alone
    first = alone[0]
    assert first["run"] == ("finished", "the answer", None)
    assert first["asker_runs"] == [("finished", False), ("finished", True)]
    assert first["asker_inputs"] == [[("text", "asker", "the answer", True, True)]]
    assert ("text", "holder", "asker", "the answer") in first["conversation"]


async def test_replies_are_told_from_ends_that_could_be_refused(
    parley: Harness, tmp_path: Path
) -> None:
    held = await hold_in_agent_conversation(parley, tmp_path, 0)
    other = await hold_in_agent_conversation(parley, tmp_path, 1)
    third = await hold_in_agent_conversation(parley, tmp_path, 2)
    answer, empty = held.end("the answer"), other.end("   ")
    remember = ActionCall(name="remember", arguments={"note": "x"})
    failed = Outcome(held.run_id, False, "it broke", started_as=hash_token(held.token))
    could_be_refused = [
        held.end("the answer", actions=(remember,)),
        failed,
        replace(answer, started_as=hash_token("prt_an-earlier-start")),
        replace(answer, stopped=True),
        held.end("x" * 300_000),  # longer than any text: refused one by one, saying so
    ]
    async with parley.context.store.transaction() as tx:
        runs = await tx.runs.by_ids([held.run_id, other.run_id, third.run_id])
        topics = await tx.topics.by_ids([held.topic_id, other.topic_id, third.topic_id])
        run, topic = runs[held.run_id], topics[held.topic_id]
        other_run, other_topic = runs[other.run_id], topics[other.topic_id]
        besides = [(other.end("hi"), other_run, other_topic)]
        besides.append((third.end("hi"), runs[third.run_id], topics[third.topic_id]))
        await tx.topics.lock({t.root_id for t in topics.values()})
        both = [(answer, run, topic), (answer, run, topic), (empty, other_run, other_topic)]
        plain, rest = await take_plain(tx, both)
        # Each beside two plain replies of other runs: one plain reply alone goes one by one.
        aside = [await take_plain(tx, [(end, run, topic), *besides]) for end in could_be_refused]
        alone = await take_plain(tx, [(answer, run, topic)])
        # Two different ends of one run: one by one, where the first to end it wins.
        _, different = await take_plain(tx, [(answer, run, topic), (failed, run, topic), *besides])
        # In the asker's person conversation, not an agent conversation: a reply goes there.
        person_topic = (await tx.topics.by_ids([topic.root_id]))[topic.root_id]
        _, in_person_topic = await take_plain(tx, [(answer, run, person_topic)])
    assert rest == []
    assert [(reply.outcome, reply.recipient is None) for reply in plain] == [
        (answer, False),  # once: its copy changes nothing
        (empty, True),  # an empty reply goes nowhere
    ]
    assert plain[0].recipient is not None and plain[0].recipient.name == held.asker
    assert alone == ([], [(answer, run, topic)])
    besides_ids = [other.run_id, third.run_id]
    plain_ids = [[reply.outcome.run_id for reply in found] for found, _ in aside]
    assert plain_ids == [besides_ids] * len(could_be_refused)
    assert [end for _, ends in aside for end, _, _ in ends] == could_be_refused
    assert [end for end, _, _ in different] == [answer, failed]  # the other two: plain
    assert [end for end, _, _ in in_person_topic] == [answer]


async def test_a_reply_to_an_agent_that_takes_no_text_is_refused_as_before(
    parley: Harness, tmp_path: Path
) -> None:
    held = await hold_in_agent_conversation(parley, tmp_path, 0)
    response = await parley.owner.post(
        f"/api/v1/agents/{held.asker}/retire", json={"force": True, "reason": "gone"}
    )
    assert response.status_code == 200, response.text
    await recorder_of(parley).record([held.end("the answer")])
    run = (await get(parley.owner, f"/runs/{held.run_id}"))["run"]
    assert run["state"] == "failed"
    assert f"agent {held.asker} is retired" in run["reason"]


ASKS_FOUR = """
    rules:
{rules}
    otherwise:
{sends}
"""


async def test_a_batch_past_its_hop_budget_counts_each_hop_in_turn(
    settings: Settings, clock: ManualClock, tmp_path: Path
) -> None:
    """One asker asks four holders: four hops of its origin. With a budget of six, the first
    two replies of a batch of four pass and the last two are refused, as one by one."""
    async with started(settings.model_copy(update={"hop_budget": 6}), clock) as parley:
        holders = [f"holder{n}" for n in range(4)]
        program = tmp_path / "hold_once.py"
        program.write_text(HOLD_ONCE)
        workspaces = [
            Path((await parley.hire(h, brain=f"command:{sys.executable} {program}"))["workspace"])
            for h in holders
        ]
        rules = "\n".join(
            f"      - when: {{from: {h}}}\n        do: [{{sleep: 0}}]" for h in holders
        )
        sends = "\n".join(f"      - send: {{to: {h}, text: question}}" for h in holders)
        brain = script(tmp_path, "asker", ASKS_FOUR.format(rules=rules, sends=sends))
        await parley.hire("asker", brain=brain)
        await say(parley.owner, "asker", "go")
        tokens = [w / "token" for w in workspaces]

        async def holding() -> bool:
            return all(t.exists() and t.read_text() for t in tokens)

        assert await eventually(holding)
        ends = []
        for holder, token in zip(holders, tokens, strict=True):
            [run] = items(await get(parley.owner, f"/runs?agent={holder}"))
            held = Held("asker", holder, run["id"], token.read_text(), run["topic_id"])
            ends.append(held.end("the answer"))
        await recorder_of(parley).record(ends)
        states = [(await get(parley.owner, f"/runs/{e.run_id}"))["run"] for e in ends]
        assert [run["state"] for run in states] == ["finished", "finished", "failed", "failed"]
        assert all("hop budget" in run["reason"] for run in states[2:])
