"""Any JSON at an A2A endpoint gets a JSON-RPC answer — a result or an error with a message,
never a server error — and a call that is refused keeps nothing."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.a2a.support import A2AHome
from tests.a2a.test_perimeter import V1, runs_of
from tests.support import bearer

METHODS = st.sampled_from(
    [
        "SendMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "Nope",
        "",
        "tasks/get",
    ]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
PARAMS = st.fixed_dictionaries(
    {},
    optional={
        "id": JSON | st.text(max_size=30),
        "message": st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", "nobody", 7]),
                "messageId": JSON,
                "contextId": JSON | st.text(max_size=250),
                "taskId": JSON,
                "parts": st.lists(
                    st.fixed_dictionaries({}, optional={"text": JSON, "data": JSON, "url": JSON}),
                    max_size=3,
                ),
            },
        ),
        "pageSize": JSON,
        "historyLength": JSON,
        "status": JSON,
        "configuration": st.dictionaries(st.text(max_size=30), JSON, max_size=3),
    },
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(method=METHODS, params=PARAMS | JSON, request_id=JSON)
def test_any_call_gets_a_json_rpc_answer(
    a2a_home: A2AHome, method: str, params: Any, request_id: Any
) -> None:
    if not runs_of_home_ready(a2a_home):
        a2a_home.hire("scribe")
        a2a_home.tokens["planner"] = a2a_home.client_token("planner")
    token = a2a_home.tokens["planner"]
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    answered = httpx.post(
        a2a_home.agent_url("scribe"),
        content=json.dumps(body),
        headers={**V1, **bearer(token), "Content-Type": "application/json"},
        timeout=30,
    )
    assert answered.status_code == 200, answered.text
    if answered.headers["content-type"].startswith("text/event-stream"):
        events = [line[5:] for line in answered.text.splitlines() if line.startswith("data:")]
        answer = json.loads(events[-1])  # a stream's last event: its end, or its error
    else:
        answer = answered.json()
    assert answer["jsonrpc"] == "2.0"
    if "error" in answer:
        assert isinstance(answer["error"]["message"], str) and answer["error"]["message"]
        assert answer["error"]["code"] != -32603, answer  # never an internal error
    else:
        assert method in ("SendMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask")
    if "error" in answer and method == "SendMessage":
        assert len(runs_of(a2a_home, "scribe")) == a2a_home.kept_runs
    a2a_home.kept_runs = len(runs_of(a2a_home, "scribe"))


def runs_of_home_ready(home: A2AHome) -> bool:
    return "planner" in home.tokens
