"""A real server process killed between "the completion's post is in the outbox" and "sent"
(its channel away, so the post waits for a retry): after a restart the post is delivered, once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench.ports import free_port
from tests.runs.support import script
from tests.support import until

MANAGER = """
    rules:
      - when: {text: "^go$"}
        do: [{spawn: {agent: ann, text: "the part"}}]
    otherwise: []
"""


@contextmanager
def file_channel_server(workdir: Path, port: int, folder: Path) -> Iterator[subprocess.Popen[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PARLEY_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.channels.file_channel_server",
         str(workdir / "parley-data"), str(port), str(folder)],
        cwd=Path(__file__).parents[2], env=env, text=True,
    )  # fmt: skip
    try:
        assert until(lambda: _healthy(port), within=60), "the server did not come up"
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=20)


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def _api(port: int, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}/api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )


def _post_item(api: httpx.Client) -> dict[str, Any] | None:
    items = api.get("/deliveries").json()["items"]
    return next((item for item in items if item["kind"] == "channel_post"), None)


def test_a_post_written_but_not_sent_is_delivered_once_after_a_restart(tmp_path: Path) -> None:
    folder = tmp_path / "file-channel"
    folder.mkdir()
    (folder / "away").touch()
    port = free_port()
    with file_channel_server(tmp_path, port, folder) as server:
        token = (tmp_path / "parley-data" / "private" / "owner-token").read_text().strip()
        with _api(port, token) as api:
            brain = script(tmp_path, "manager", MANAGER)
            for body in ({"name": "manager", "brain": brain}, {"name": "ann", "human": "owner"}):
                assert api.post("/agents", json={"node": "local", **body}).status_code == 201
            assert api.post("/conversations/manager/messages", json={"text": "go"}).is_success
            turns = until(lambda: api.get("/me/turns").json()["items"])
            assert turns, "no turn came"
            [turn] = turns
            place = {"channel": "file", "account_id": "acct", "conversation_id": "thread-1",
                     "parent_conversation_id": "main"}  # fmt: skip
            session = f"topic:{turn['run']['topic_id']}"
            bound = api.post("/bindings", json={"session": session, **place})
            assert bound.status_code == 201, bound.text
            answered = api.post(
                f"/runs/{turn['run']['id']}/answer", json={"text": "ok", "complete": True}
            )
            assert answered.is_success, answered.text
            waiting = until(lambda: (i := _post_item(api)) and i["attempts"] >= 1 and i)
            assert waiting, "the post was never tried"
            assert waiting["state"] == "pending"
            assert waiting["last_error"] == "the file channel is away"
        server.kill()  # no shutdown of any kind
        server.wait(timeout=10)
    assert not (folder / "posts.jsonl").exists()
    (folder / "away").unlink()

    with file_channel_server(tmp_path, port, folder), _api(port, token) as api:
        delivered = until(lambda: (i := _post_item(api)) and i["state"] == "delivered" and i)
        assert delivered, "the post was not delivered after the restart"
        assert (delivered["mode"], delivered["reason"]) == ("bound", "single-binding")
    posts = [json.loads(line) for line in (folder / "posts.jsonl").read_text().splitlines()]
    assert [(p["conversation"], p["key"]) for p in posts] == [("thread-1", delivered["key"])]
    assert posts[0]["text"].endswith("done: ok")
