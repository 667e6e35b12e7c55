"""The A2A surface tried from outside: no token, other kinds of tokens, a removed client,
another client's tasks, agents not exposed, old method names, wrong versions, hostile bodies —
each a clear error, nothing stored."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.a2a.support import A2AHome
from tests.support import bearer

V1 = {"A2A-Version": "1.0"}
MESSAGE = {"role": "ROLE_USER", "messageId": "m"}
LOOPBACK = "http://127.0.0.1/"
DEEP_PARAMS = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": '
    + b'{"a":' * 10_000
    + b"1"
    + b"}" * 10_000
    + b"}"
)


def rpc(method: str, params: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


def send_params(text: str, **message: Any) -> dict[str, Any]:
    body = {"role": "ROLE_USER", "messageId": "m-1", "parts": [{"text": text}], **message}
    return {"message": body}


def post(home: A2AHome, agent: str, token: str | None, body: Any, **headers: str) -> httpx.Response:
    sent = {**V1, **(bearer(token) if token else {}), **headers}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        home.agent_url(agent),
        content=content,
        headers={"Content-Type": "application/json", **sent},
        timeout=60,
    )


def runs_of(home: A2AHome, agent: str) -> list[dict[str, Any]]:
    with home.owner() as owner:
        found: list[dict[str, Any]] = owner.get("/runs", params={"agent": agent}).json()["items"]
        return found


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def test_without_a_client_token_everything_but_the_card_is_401(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    owner_token = a2a_home.served.owner_token
    for token in (None, owner_token, "pac_not-a-token", "ppt_peer-token"):
        answered = post(a2a_home, "scribe", token, rpc("SendMessage", send_params("hi")))
        assert answered.status_code == 401, (token, answered.text)
        assert "A2A client" in answered.json()["message"]
    rest = httpx.post(a2a_home.agent_url("scribe") + "/rest/message:send", json={})
    assert rest.status_code == 401
    card = httpx.get(a2a_home.agent_url("scribe") + "/.well-known/agent-card.json")
    assert card.status_code == 200
    assert runs_of(a2a_home, "scribe") == []


def test_a_client_token_opens_nothing_of_the_api(a2a_home: A2AHome) -> None:
    token = a2a_home.client_token("planner")
    for path in ("/api/v1/agents", "/api/v1/people/me", "/api/v1/a2a/clients"):
        assert httpx.get(a2a_home.served.url + path, headers=bearer(token)).status_code == 401


def test_a_removed_client_is_refused_and_its_contexts_close(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    sent = post(a2a_home, "scribe", token, rpc("SendMessage", send_params("hi")))
    context = sent.json()["result"]["task"]["contextId"]
    with a2a_home.owner() as owner:
        removed = owner.delete("/a2a/clients/planner")
        assert removed.status_code == 200 and removed.json()["removed_at"] is not None
        [run] = owner.get("/runs", params={"agent": "scribe"}).json()["items"]
        topic = owner.get(f"/topics/{run['topic_id']}").json()["topic"]
    assert topic["closed_at"] is not None and "planner removed" in topic["closed_reason"]
    again = post(
        a2a_home, "scribe", token, rpc("SendMessage", send_params("hi", contextId=context))
    )
    assert again.status_code == 401


def test_another_clients_task_is_not_found_as_none_is(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    mine, theirs = a2a_home.client_token("mine"), a2a_home.client_token("theirs")
    task = post(a2a_home, "scribe", theirs, rpc("SendMessage", send_params("secret"))).json()
    task_id = task["result"]["task"]["id"]
    for method in ("GetTask", "CancelTask"):
        for given in (task_id, "999999", "not-a-number", "1" * 40):
            error = error_of(post(a2a_home, "scribe", mine, rpc(method, {"id": given})))
            assert error["code"] == -32001, (method, given, error)
    listed = post(a2a_home, "scribe", mine, rpc("ListTasks", {})).json()["result"]
    assert listed["tasks"] == []
    # Their context, named by me, is a new one of mine: nothing of theirs is read.
    context = task["result"]["task"]["contextId"]
    sent = post(a2a_home, "scribe", mine, rpc("SendMessage", send_params("hi", contextId=context)))
    assert sent.json()["result"]["task"]["history"][0]["parts"][0]["text"] == "hi"
    with a2a_home.owner() as owner:
        runs = owner.get("/runs", params={"agent": "scribe"}).json()["items"]
    assert len({run["topic_id"] for run in runs}) == 2


def test_an_agent_not_exposed_is_not_found_card_and_endpoint(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    with a2a_home.owner() as owner:
        assert owner.post("/agents", json={"name": "hidden", "node": "local"}).status_code == 201
        assert owner.delete("/a2a/agents/scribe").status_code == 204
    for agent in ("scribe", "hidden", "nobody"):
        card = httpx.get(a2a_home.agent_url(agent) + "/.well-known/agent-card.json")
        assert card.status_code == 404
        assert (
            post(a2a_home, agent, token, rpc("SendMessage", send_params("hi"))).status_code == 404
        )
    assert runs_of(a2a_home, "scribe") == [] and runs_of(a2a_home, "hidden") == []


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (rpc("NoSuchMethod", {}), -32601),
        (rpc("message/send", send_params("old name")), -32601),  # 0.3's, no compat switch
        (rpc("SendMessage", send_params("nul \x00 inside")), -32602),
        (rpc("SendMessage", send_params("x" * 100_001)), -32602),
        (rpc("SendMessage", {"message": {**MESSAGE, "parts": []}}), -32602),
        (rpc("SendMessage", {"message": {**MESSAGE, "parts": [{"data": {"a": 1}}]}}), -32005),
        (rpc("SendMessage", send_params("x", contextId="c" * 201)), -32602),
        (rpc("SendMessage", send_params("x", contextId="bad\x00context")), -32602),
        (rpc("ListTasks", {"pageSize": 100000}), -32602),
        (rpc("ListTasks", {"pageToken": "garbage"}), -32602),
        (rpc("ListTasks", {"pageSize": 0}), -32602),
        (rpc("ListTasks", {"historyLength": -1}), -32602),
        (rpc("ListTasks", {"status": "INVALID_STATUS"}), -32602),
        (rpc("ListTasks", {"status": 99}), -32602),
        (rpc("SendMessage", {**send_params("x"), "configuration": {"historyLength": -1}}), -32602),
        (rpc("CreateTaskPushNotificationConfig", {"taskId": "1", "url": LOOPBACK}), -32001),
        (b"{not json", -32700),
        (b"[" * 10_000 + b"]" * 10_000, -32700),
        (DEEP_PARAMS, -32700),
    ],
    ids=[
        "unknown-method", "v0.3-name", "nul", "past-text-limit", "no-parts", "data-part",
        "long-context", "nul-context", "huge-page", "bad-page-token", "zero-page",
        "negative-history", "unknown-state", "unknown-state-number", "negative-history-on-send",
        "push-to-no-task", "not-json", "deep-array", "deep-params",
    ],
)  # fmt: skip
def test_hostile_calls_get_a_json_rpc_error_and_store_nothing(
    a2a_home: A2AHome, body: Any, code: int | None
) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    error = error_of(post(a2a_home, "scribe", token, body))
    assert error["message"]
    if code is not None:
        assert error["code"] == code, error
    else:
        assert -32700 <= error["code"] <= -32000, error
    assert runs_of(a2a_home, "scribe") == []


def test_a_body_past_the_limit_is_refused_and_stores_nothing(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    huge = rpc("SendMessage", send_params("x" * 2_000_000))
    answered = post(a2a_home, "scribe", token, huge)
    assert answered.status_code == 413
    assert answered.json()["error"]["code"] == -32600
    assert "larger than 1000000 bytes" in answered.json()["error"]["message"]
    assert runs_of(a2a_home, "scribe") == []


def test_a_wrong_version_header_is_refused(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    for version in ("0.3", "2.0"):
        sent = post(
            a2a_home,
            "scribe",
            token,
            rpc("SendMessage", send_params("hi")),
            **{"A2A-Version": version},
        )
        assert error_of(sent)["code"] == -32009
    assert runs_of(a2a_home, "scribe") == []


def test_only_owners_manage_a2a(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    with a2a_home.owner() as owner:
        member = owner.post("/people", json={"name": "mia", "role": "member"}).json()["token"]
    with httpx.Client(base_url=f"{a2a_home.served.url}/api/v1", headers=bearer(member)) as mia:
        for method, path, body in [
            ("POST", "/a2a/clients", {"name": "sneaky"}),
            ("GET", "/a2a/clients", None),
            ("POST", "/a2a/agents", {"agent": "scribe"}),
            ("GET", "/a2a/agents", None),
            ("DELETE", "/a2a/agents/scribe", None),
        ]:
            answered = mia.request(method, path, json=body)
            assert answered.status_code == 403, (method, path, answered.text)
    with a2a_home.owner() as owner:
        assert owner.get("/a2a/clients").json()["items"] == []


def test_http_json_refuses_an_unknown_task_state_too(a2a_home: A2AHome) -> None:
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    headers = {**V1, **bearer(token)}
    url = a2a_home.agent_url("scribe") + "/rest/tasks"
    refused = httpx.get(url, params={"status": "INVALID_STATUS"}, headers=headers)
    assert refused.status_code == 400 and "not a task state" in refused.text
    listed = httpx.get(url, params={"status": "TASK_STATE_COMPLETED"}, headers=headers)
    assert listed.status_code == 200, listed.text


def test_http_json_errors_carry_the_status_a2a_gives_them(a2a_home: A2AHome) -> None:
    """A2A 1.0 §5.4: a task that cannot be cancelled is 409, a part of a type the agent does not
    read 415 (a2a-sdk answers both 400); the body's code says the same; nothing is queued."""
    a2a_home.hire("scribe")
    token = a2a_home.client_token("planner")
    headers = {**V1, **bearer(token)}
    rest = a2a_home.agent_url("scribe") + "/rest"
    sent = httpx.post(f"{rest}/message:send", json=send_params("hi"), headers=headers)
    task_id = sent.json()["task"]["id"]
    again = httpx.post(f"{rest}/tasks/{task_id}:cancel", headers=headers)
    file_part = {"raw": "aGk=", "mediaType": "image/png", "filename": "a.png"}
    a_file = {"message": {"role": "ROLE_USER", "messageId": "m-2", "parts": [file_part]}}
    refused = httpx.post(f"{rest}/message:send", json=a_file, headers=headers)
    unknown = httpx.get(f"{rest}/tasks/999999", headers=headers)
    assert sent.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED", sent.text
    assert again.status_code == 409 and again.json()["error"]["code"] == 409, again.text
    assert "nothing to cancel" in again.json()["error"]["message"]
    assert refused.status_code == 415 and refused.json()["error"]["code"] == 415, refused.text
    assert int(again.headers["content-length"]) == len(again.content)
    assert unknown.status_code == 404, unknown.text  # as the SDK gives it already
    assert len(runs_of(a2a_home, "scribe")) == 1
