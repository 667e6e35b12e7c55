"""A2A push notifications: a URL that resolves inside (loopback, private, link-local, metadata)
is refused unless an owner allowed its host; an allowed one is told each state its task
reaches, once, through the outbox, with the client's token."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bench.ports import free_port
from parley.a2a.pushes import PushNotice, PushSender
from parley.errors import Invalid, Unavailable
from tests.a2a.support import A2AHome, home
from tests.a2a.test_perimeter import error_of, post, rpc, send_params
from tests.certificates import self_signed
from tests.support import eventually


@contextmanager
def listener(
    certificate: tuple[Path, Path] | None = None,
) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A client's push endpoint on loopback (HTTPS with ``certificate``, its file and key):
    what it was told, with its headers."""
    told: list[dict[str, Any]] = []

    async def hear(request: Request) -> Response:
        told.append({"body": json.loads(await request.body()), "headers": dict(request.headers)})
        return Response(status_code=204)

    port = free_port()
    app = Starlette(routes=[Route("/hook", hear, methods=["POST"])])
    cert, key = certificate or (None, None)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", ssl_certfile=cert, ssl_keyfile=key
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    try:
        yield f"{'https' if certificate else 'http'}://127.0.0.1:{port}/hook", told
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


def _notice(url: str) -> PushNotice:
    return PushNotice(url=url, token="t", auth_scheme=None, auth_credentials=None, body="{}")


def _resolving(*answers: Sequence[str]) -> tuple[list[str], Any]:
    """A resolver giving ``answers`` in turn (the last again after), and who it was asked."""
    asked: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(answers[min(len(asked), len(answers)) - 1])

    return asked, resolve


async def test_a_push_connects_to_the_address_checked_not_to_what_the_name_says_next() -> None:
    """DNS rebinding: a name that resolves outside for the check and inside for the connection
    would reach what the check refused. The push goes to the address checked, the URL's name
    in its Host header and as the TLS name; the next send checks again and is refused."""
    sent: list[httpx.Request] = []

    def hear(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(204)

    asked, resolve = _resolving(["93.184.215.14"], ["169.254.169.254"])
    sender = PushSender([], transport=httpx.MockTransport(hear), resolve=resolve)
    await sender.send(_notice("https://hooks.example:8443/hook"), "key-1")
    [request] = sent
    assert str(request.url) == "https://93.184.215.14:8443/hook"
    assert request.headers["host"] == "hooks.example:8443"
    assert request.extensions["sni_hostname"] == "hooks.example"
    assert asked == ["hooks.example"]  # resolved once for the check and the connection
    with pytest.raises(Invalid, match="does not push there"):
        await sender.send(_notice("https://hooks.example:8443/hook"), "key-2")
    assert len(sent) == 1
    await sender.close()


@pytest.mark.parametrize("certified", ["hooks.test", "other.test"])
async def test_a_pinned_push_verifies_the_certificate_for_the_url_s_name(
    tmp_path: Path, certified: str
) -> None:
    """Sent to the address its check resolved (``hooks.test`` resolves nowhere else: .test is
    reserved), over TLS verified for the URL's name: a certificate for another name is
    refused, and nothing is told."""
    certificate = self_signed(tmp_path, (certified,))
    trust = ssl.create_default_context(cafile=str(certificate[0]))
    with listener(certificate) as (url, told):
        port = httpx.URL(url).port
        _, resolve = _resolving(["127.0.0.1"])
        sender = PushSender(
            ["hooks.test"], transport=httpx.AsyncHTTPTransport(verify=trust), resolve=resolve
        )
        try:
            if certified == "hooks.test":
                await sender.send(_notice(f"https://hooks.test:{port}/hook"), "key")
            else:
                with pytest.raises(Unavailable, match="CERTIFICATE_VERIFY_FAILED"):
                    await sender.send(_notice(f"https://hooks.test:{port}/hook"), "key")
        finally:
            await sender.close()
    if certified == "hooks.test":
        [heard] = told
        assert heard["headers"]["host"] == f"hooks.test:{port}"
        assert heard["headers"]["x-a2a-notification-id"] == "key"
    else:
        assert told == []
