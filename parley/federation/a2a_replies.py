"""What an A2A agent answered, given to the thread its task was started from: as a text frame
from its role, applied as a peer's is (``receive_batch``: the thread's seq, the queue limit, a
paused or closed thread refusing it), so that the role that asked takes it up in a turn. Each
reply of a task has its own message id, so one given twice (after a crash) is taken once."""

from __future__ import annotations

from dataclasses import dataclass

from parley.clock import Clock
from parley.federation.backlogs import Backlogs
from parley.federation.frames import FrameVerdict, TextFrame
from parley.federation.model import RemoteTask
from parley.federation.receiver import receive_batch
from parley.store import Store
from parley.text import MAX_TEXT

CUT = "\n[cut: the agent's answer was longer than Parley's text limit]"
TRIES = 3  # a seq taken meanwhile (another reply of the thread) is tried again with the next


@dataclass(frozen=True)
class Intake:
    """What replies are applied with: the queue limit's default, the connections' backlogs."""

    default_limit: int
    backlogs: Backlogs


async def give_reply(
    store: Store, clock: Clock, intake: Intake, task: RemoteTask, text: str
) -> FrameVerdict:
    frame = task.frame
    body = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - len(CUT)] + CUT
    async with store.transaction() as tx:
        connection = await tx.connections.by_name(task.peer.name)
        topic = await tx.topics.by_id(frame.topic_id)
    assert connection is not None and topic is not None
    seq = topic.seq_received + 1
    for _ in range(TRIES):
        reply = TextFrame(
            type="text",
            thread_id=frame.thread_id,
            seq=seq,
            message_id=f"a2a-{task.id}-{task.replies}",
            from_role=frame.to_role,
            to_role=frame.from_role,
            body=body or "(the agent answered with no text)",
        )
        [verdict] = await receive_batch(
            store, clock, connection, [reply], intake.default_limit, intake.backlogs
        )
        if verdict.expected_seq is None:
            return verdict
        seq = verdict.expected_seq
    return verdict
