"""A2A push notifications: a URL that resolves inside (loopback, private, link-local, metadata)
is refused unless an owner allowed its host; an allowed one is told each state its task
reaches, once, through the outbox, with the client's token."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.ports import free_port
from tests.a2a.support import A2AHome, home
from tests.a2a.test_perimeter import error_of, post, rpc, send_params
from tests.support import eventually


@contextmanager
def listener() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A client's push endpoint on loopback: what it was told, with its headers."""
    told: list[dict[str, Any]] = []

    async def hear(request: Request) -> Response:
        told.append({"body": json.loads(await request.body()), "headers": dict(request.headers)})
        return Response(status_code=204)

    port = free_port()
    app = Starlette(routes=[Route("/hook", hear, methods=["POST"])])
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    try:
        yield f"http://127.0.0.1:{port}/hook", told
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/hook",
        "http://localhost/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/",
        "http://[::1]/",
        "file:///etc/passwd",
        "http://no-such-host.invalid/",
    ],
)
def test_a_push_url_inside_is_refused_and_nothing_kept(a2a_home: A2AHome, url: str) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    sent = post(a2a_home, "scribe", token, rpc("SendMessage", send_params("hi")))
    task_id = sent.json()["result"]["task"]["id"]
    asked = rpc("CreateTaskPushNotificationConfig", {"taskId": task_id, "url": url})
    error = error_of(post(a2a_home, "scribe", token, asked))
    assert error["code"] == -32602, error
    assert any(words in error["message"] for words in ("does not push there", "http(s) URL"))
    listed = post(
        a2a_home, "scribe", token, rpc("ListTaskPushNotificationConfigs", {"taskId": task_id})
    )
    assert listed.json()["result"].get("configs", []) == []
    # Asked with the message itself: refused before anything is queued.
    with_push = rpc(
        "SendMessage",
        {**send_params("again"), "configuration": {"taskPushNotificationConfig": {"url": url}}},
    )
    assert error_of(post(a2a_home, "scribe", token, with_push))["code"] == -32602
    with a2a_home.owner() as owner:
        assert len(owner.get("/runs", params={"agent": "scribe"}).json()["items"]) == 1


async def test_an_allowed_host_is_told_each_state_once_with_the_token(
    tmp_path: Path, sqlite_template: Path
) -> None:
    with (
        listener() as (url, told),
        home(tmp_path, sqlite_template, a2a_push_allowed_hosts="127.0.0.1") as parley,
    ):
        parley.hire_slow("slow")
        token = parley.client_token("planner")
        config = {"url": url, "token": "client-secret", "id": "mine"}
        body = {
            **send_params("go"),
            "configuration": {"returnImmediately": True, "taskPushNotificationConfig": config},
        }
        sent = post(parley, "slow", token, rpc("SendMessage", body))
        task_id = sent.json()["result"]["task"]["id"]

        async def working() -> bool:
            return any(n["body"]["task"]["status"]["state"] == "TASK_STATE_WORKING" for n in told)

        assert await eventually(working, within=30), told
        cancelled = post(parley, "slow", token, rpc("CancelTask", {"id": task_id}))
        assert cancelled.json()["result"]["status"]["state"] == "TASK_STATE_CANCELED"

        async def ended() -> bool:
            return any(n["body"]["task"]["status"]["state"] == "TASK_STATE_CANCELED" for n in told)

        assert await eventually(ended, within=30), told
        got = post(
            parley,
            "slow",
            token,
            rpc("GetTaskPushNotificationConfig", {"taskId": task_id, "id": "mine"}),
        )
        assert got.json()["result"]["url"] == url and "token" not in got.json()["result"]
    states = [n["body"]["task"]["status"]["state"] for n in told]
    assert len(states) == len(set(states))  # each state once
    assert {n["headers"]["x-a2a-notification-token"] for n in told} == {"client-secret"}
    assert {n["body"]["task"]["id"] for n in told} == {task_id}
