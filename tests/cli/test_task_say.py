"""parley task say (issue 30, point 2): more text for an open task, from its giver or an owner;
with --wait the reply is printed as `parley say` prints one."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_runtime_commands import hire, ok, ok_json, run, running_run, until
from tests.served import Served
from tests.support import items

WORKER = """
    rules:
      - when: {text: "nap"}
        do:
          - sleep: 30
      - when: {text: "finish"}
        do:
          - complete: "finished"
    otherwise:
      - reply: "heard {text} from {sender}"
"""


def test_task_say_continues_a_stopped_task_and_waits_for_the_reply(
    served: Served, tmp_path: Path
) -> None:
    hire(served, tmp_path, "worker", WORKER)
    task_id = str(ok_json(served, "task", "create", "worker", "nap")["id"])
    stopped = running_run(served, "worker")
    assert ok(served, "task", "stop", task_id) == f"stopped run {stopped}\n"

    waited = ok(served, "task", "say", task_id, "wake up", "--wait")
    assert waited == "heard wake up from owner\n"
    answer = ok_json(served, "task", "say", task_id, "still there?", "--wait")
    assert (answer["state"], answer["reply"]) == ("finished", "heard still there? from owner")
    # Without --wait: the task and the run that takes the text, to follow.
    said = ok(served, "task", "say", task_id, "-", stdin="from stdin\n")
    queued = re.fullmatch(rf"task {task_id} \(run (\d+) queued\)\n", said)
    assert queued, said
    run_id = queued[1]
    followed = run(served, "run", "follow", run_id)
    assert followed.exit_code == 0 and followed.stdout.startswith("heard from stdin")
    shown = ok_json(served, "task", "show", task_id)
    assert shown["topic"]["status"] == "open"
    assert [r["state"] for r in items(shown["runs"])][::-1] == ["stopped", *["finished"] * 3]


def test_task_say_is_refused_to_other_members_and_for_an_ended_task(
    served: Served, tmp_path: Path
) -> None:
    hire(served, tmp_path, "worker", WORKER)
    task_id = str(ok_json(served, "task", "create", "worker", "finish")["id"])
    member = ok_json(served, "person", "add", "bo", "--member")["token"]
    refused = run(served, "task", "say", task_id, "mine now", PARLEY_TOKEN=member)
    assert refused.exit_code == 5, refused.output
    assert refused.stderr == (
        f"error: only an owner or the person who gave task {task_id} may write to it\n"
    )
    missing = run(served, "task", "say", "987654", "hello", "--wait")
    assert (missing.exit_code, missing.stderr) == (3, "error: no task 987654\n")
    until(lambda: json.loads(ok(served, "task", "show", task_id, "--json"))["topic"]["result"])
    ended = run(served, "task", "say", task_id, "one more thing")
    assert ended.exit_code == 4, ended.output
    assert ended.stderr == (
        f"error: task {task_id} is done: it takes no more text; give a new task instead\n"
    )
