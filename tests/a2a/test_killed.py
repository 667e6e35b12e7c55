"""Parley SIGKILLed while an A2A client streams a task, then started again on the same data
folder: GetTask tells each task's true state — the completed one as it was, its turn not run
again; the interrupted one's text on its next run, which a cancel then stops."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path
from typing import Any

import httpx

from tests.a2a.test_calling import ASKER
from tests.a2a.test_perimeter import rpc, send_params
from tests.cli.test_runtime_commands import until
from tests.cli.test_server_killed import SLOW, Server, hire_command, runs_of, server
from tests.federation.a2a_sample import TOKEN, sample_agent

WITHIN = 60.0


def call(url: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    answered: dict[str, Any] = httpx.post(url, json=body, headers=headers, timeout=WITHIN).json()
    return answered


def test_a_kill_mid_stream_loses_and_repeats_nothing(tmp_path: Path) -> None:
    with server(tmp_path) as served:
        hire_command(served, "slow", SLOW)
        served.cli("agent", "hire", "quick", "--node", "local")
        for agent in ("slow", "quick"):
            served.cli("a2a", "expose", agent)
        token = served.cli("a2a", "client", "add", "planner")["token"]
        base = f"http://127.0.0.1:{served.port}/a2a"
        done = call(f"{base}/quick", token, rpc("SendMessage", send_params("finish this")))
        completed = done["result"]["task"]
        assert completed["status"]["state"] == "TASK_STATE_COMPLETED"
        streamed: list[str] = []
        reading = threading.Thread(
            target=_stream, args=(f"{base}/slow", token, streamed), daemon=True
        )
        reading.start()
        until(lambda: any("first part" in line for line in streamed), WITHIN)
        served.kill()
        reading.join(WITHIN)
        served.start()
        base = f"http://127.0.0.1:{served.port}/a2a"
        again = call(f"{base}/quick", token, rpc("GetTask", {"id": completed["id"]}))["result"]
        assert again["status"]["state"] == "TASK_STATE_COMPLETED"
        assert again["artifacts"] == completed["artifacts"]
        assert len(runs_of(served, "quick")) == 1  # not run again
        slow_task = _first_task(streamed)
        got = call(f"{base}/slow", token, rpc("GetTask", {"id": slow_task}))["result"]
        assert got["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
        states = {run["state"] for run in runs_of(served, "slow")}
        assert "failed" in states and states <= {"failed", "queued", "running"}
        stopped = call(f"{base}/slow", token, rpc("CancelTask", {"id": slow_task}))["result"]
        assert stopped["status"]["state"] == "TASK_STATE_CANCELED"


def _stream(url: str, token: str, lines: list[str]) -> None:
    headers = {"Authorization": f"Bearer {token}", "A2A-Version": "1.0"}
    body = rpc("SendStreamingMessage", send_params("take your time"))
    try:
        with httpx.stream("POST", url, json=body, headers=headers, timeout=WITHIN) as response:
            for line in response.iter_lines():
                lines.append(line)
    except httpx.HTTPError:
        pass  # the server was killed under it


def _first_task(lines: list[str]) -> str:
    for line in lines:
        if line.startswith("data:"):
            event = json.loads(line[len("data:") :])
            task_id: str = event["result"]["task"]["id"]
            return task_id
    raise AssertionError(f"no task in {lines}")


def test_a_text_the_agent_took_before_a_kill_is_found_there_not_sent_again(
    tmp_path: Path,
) -> None:
    """Parley killed after an A2A agent took a text but before Parley recorded the task it made:
    started again, it sends the text's batch again, finds the task among the context's tasks
    by the text's message id, and follows it — the agent did the work once."""
    release = threading.Event()
    with sample_agent(hold=release) as (url, seen), server(tmp_path) as served:
        rules = tmp_path / "asker.yaml"
        rules.write_text(textwrap.dedent(ASKER))
        served.cli("agent", "hire", "asker", "--node", "local", "--brain", f"scripted:{rules}")
        token_file = tmp_path / "sample-token"
        token_file.write_text(TOKEN)
        served.cli("connection", "add-a2a", "sample", url, "--token-file", str(token_file))
        with served.api() as api:
            said = api.post("/conversations/asker/messages", json={"text": "ask hold this"})
            assert said.status_code == 202, said.text
        until(lambda: seen.texts == ["hold this"], WITHIN)  # taken there; its answer held
        served.kill()
        release.set()
        served.start()
        until(lambda: any("sample says: echo: hold this" in m for m in _said(served)), WITHIN)
        assert seen.texts == ["hold this"]
        assert seen.methods.count("SendMessage") == 1 and "ListTasks" in seen.methods
        assert sum("sample says" in m for m in _said(served)) == 1


def _said(served: Server) -> list[str]:
    with served.api() as api:
        shown = api.get("/conversations/asker").json()
    return [m["body"] for m in shown["messages"]["items"]]
