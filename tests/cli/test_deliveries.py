"""parley delivery list through a running server: a subtask's result whose parent was deleted
fails for good and shows with its reason; pages, state filter, owners only."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_runtime_commands import hire, ok, ok_json, run, until
from tests.conversations.test_tasks import MANAGER
from tests.served import Served


def _subtask_of(served: Served, task_id: str) -> int:
    subtasks = until(lambda: ok_json(served, "task", "show", task_id)["subtasks"]["items"])
    subtask_id: int = subtasks[0]["id"]
    return subtask_id


def test_a_result_that_cannot_be_delivered_is_listed_with_why(
    served: Served, tmp_path: Path
) -> None:
    hire(served, tmp_path, "manager", MANAGER)
    # A person's desk: its turn waits for the answer below, so the parent is surely deleted
    # before the result exists, however slow the machine (a sleeping brain raced the delete).
    ok(served, "agent", "hire", "worker", "--node", "local", "--human", "owner")
    parent = str(ok_json(served, "task", "create", "manager", "orphan")["id"])
    orphan = _subtask_of(served, parent)
    [turn] = until(lambda: ok_json(served, "turns")["items"])
    ok(served, "task", "delete", parent)
    ok(served, "answer", str(turn["run"]["id"]), "late", "--complete")
    [failed] = until(lambda: ok_json(served, "delivery", "list", "--state", "failed")["items"])
    assert failed["key"].startswith(f"task:{orphan}:run:")
    assert (failed["kind"], failed["state"], failed["attempts"]) == ("task_completion", "failed", 1)
    why = "thread: the topic it answers was closed (task deleted by owner)"
    assert failed["last_error"] == why  # its reason code beside its words
    words = ok(served, "delivery", "list", "--state", "failed", COLUMNS="250")  # a wide terminal
    assert words.splitlines()[1].split()[:2] == [str(failed["id"]), "task_completion"]
    # Piped (80 columns), the reason is whole on a line of its own, not cut to fit a column.
    piped = ok(served, "delivery", "list", "--state", "failed").splitlines()
    assert f"{failed['id']} failed: {why}" in piped

    kept = str(ok_json(served, "task", "create", "manager", "kept")["id"])
    [turn] = until(lambda: ok_json(served, "turns")["items"])
    ok(served, "answer", str(turn["run"]["id"]), "in time", "--complete")
    until(lambda: ok_json(served, "task", "show", kept)["topic"]["status"] == "done")
    newest = ok_json(served, "delivery", "list", "--limit", "1")
    assert [item["state"] for item in newest["items"]] == ["delivered"]
    assert newest["next"] is not None
    assert f"more: --before {newest['next']}" in ok(served, "delivery", "list", "--limit", "1")
    older = ok_json(served, "delivery", "list", "--limit", "1", "--before", newest["next"])
    assert (older["items"], older["next"]) == ([failed], None)


def test_delivery_list_is_for_owners_and_checks_its_state(served: Served) -> None:
    token = ok_json(served, "person", "add", "ada", "--member")["token"]
    refused = run(served, "delivery", "list", PARLEY_TOKEN=token)
    assert refused.exit_code == 5
    assert "error: only an owner may read the deliveries; ada is a member" in refused.stderr
    assert run(served, "delivery", "list", "--state", "lost").exit_code == 2
    assert ok(served, "delivery", "list") == "no deliveries\n"
