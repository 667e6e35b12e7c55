"""Bounded input (issue: safety): the caller is known before a body is read, bodies are capped
at the server layer, names are matched whole, rule files are checked without being quoted."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from parley.brains.scripted import MAX_SCRIPT_BYTES
from tests.support import Harness, bearer

LIMIT = 1_000_000  # the default max_body_bytes


async def _people(parley: Harness) -> list[str]:
    response = await parley.owner.get("/api/v1/people")
    assert response.status_code == 200, response.text
    body = response.json()
    rows = body["items"] if isinstance(body, dict) else body
    return sorted(row["name"] for row in rows)


async def test_a_body_over_the_cap_is_413_before_it_is_read(parley: Harness) -> None:
    before = await _people(parley)
    huge = b'{"name": "ada", "role": "member", "x": "' + b"a" * LIMIT + b'"}'
    response = await parley.owner.post(
        "/api/v1/people", content=huge, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert str(LIMIT) in response.json()["message"]
    assert await _people(parley) == before


async def test_a_streamed_body_is_cut_off_at_the_cap(parley: Harness) -> None:
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"name": "ada", "x": "'
        for _ in range(64):  # 4 MiB offered, in 64 KiB pieces, with no Content-Length
            sent += 65536
            yield b"a" * 65536
        yield b'"}'

    before = await _people(parley)
    response = await parley.owner.post(
        "/api/v1/people", content=chunks(), headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert sent < 4 * 1024 * 1024  # reading stopped at the cap, not at the end
    assert await _people(parley) == before


async def test_a_body_under_the_cap_is_read(parley: Harness) -> None:
    engram = "e" * 19_000
    response = await parley.owner.put("/api/v1/nodes/local/engram", json={"engram": engram})
    assert response.status_code == 200, response.text


async def test_who_calls_is_checked_before_the_body(parley: Harness) -> None:
    malformed = {"content": b"{not json", "headers": {"content-type": "application/json"}}
    huge = {"content": b"a" * (LIMIT + 1), "headers": {"content-type": "application/json"}}
    async with parley.client() as anonymous:
        for body in (malformed, huge):
            response = await anonymous.post("/api/v1/people", **body)  # type: ignore[arg-type]
            assert response.status_code == 401, response.text
            assert response.headers["www-authenticate"] == "Bearer"
    async with parley.client("pk_not-a-real-token") as stranger:
        response = await stranger.post("/api/v1/people", **malformed)  # type: ignore[arg-type]
        assert response.status_code == 401


async def test_an_action_with_a_persons_token_is_401_whatever_its_body(parley: Harness) -> None:
    response = await parley.owner.post(
        "/api/v1/act/send", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 401
    assert "run" in response.json()["message"]


async def test_names_are_matched_whole(parley: Harness) -> None:
    for name in ("scribe\n", "scribe\nx", "\nscribe", "scribe\x00"):
        hired = await parley.owner.post("/api/v1/agents", json={"name": name, "node": "local"})
        assert hired.status_code == 400, (name, hired.text)
        added = await parley.owner.post("/api/v1/people", json={"name": name})
        assert added.status_code == 400, (name, added.text)
    listed = await parley.owner.get("/api/v1/agents")
    assert "scribe" not in listed.text


async def _hire_scripted(parley: Harness, name: str, path: Path) -> httpx.Response:
    body = {"name": name, "node": "local", "brain": f"scripted:{path}"}
    return await parley.owner.post("/api/v1/agents", json=body)


async def test_a_fifo_as_rule_file_is_refused_without_hanging(
    parley: Harness, tmp_path: Path
) -> None:
    fifo = tmp_path / "rules.yaml"
    os.mkfifo(fifo)
    response = await asyncio.wait_for(_hire_scripted(parley, "piped", fifo), 10)
    assert response.status_code == 400
    assert "is not a regular file" in response.json()["message"]


async def test_a_rule_file_over_the_size_cap_is_refused(parley: Harness, tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text("otherwise: []\n" + "#" * MAX_SCRIPT_BYTES)
    response = await _hire_scripted(parley, "big", big)
    assert response.status_code == 400
    assert "larger than" in response.json()["message"]


async def test_a_bad_rule_file_is_one_line_with_its_line_never_its_contents(
    parley: Harness, tmp_path: Path
) -> None:
    secret = "s3cr3t-value-nobody-may-see"
    cases = {
        "yaml": f"rules:\n  - when: {{text: x}}\n    do: [{{reply: hi}}]\n{secret}: [: oops\n",
        "regex": f'rules:\n  - when: {{text: "({secret}"}}\n    do: [{{reply: hi}}]\n',
        "act": f"otherwise:\n  - reply: ok\n  - {secret}: nope\n",
        "shape": f"rules: {secret}\n",
    }
    lines = {"yaml": "line 4", "regex": "line 2", "act": "line 3", "shape": "line 1"}
    for case, text in cases.items():
        path = tmp_path / f"{case}.yaml"
        path.write_text(text)
        response = await _hire_scripted(parley, f"bad-{case}", path)
        assert response.status_code == 400, (case, response.text)
        message = response.json()["message"]
        assert secret not in message, (case, message)
        assert str(path) in message and lines[case] in message, (case, message)
        assert "\n" not in message, (case, message)


async def test_a_command_line_is_parsed_when_hiring(parley: Harness) -> None:
    body = {"name": "quoted", "node": "local", "brain": 'command:python3 -c "print(1)'}
    response = await parley.owner.post("/api/v1/agents", json=body)
    assert response.status_code == 400
    assert "is not a command line" in response.json()["message"]
    assert (await parley.owner.get("/api/v1/agents/quoted")).status_code == 404


async def test_the_body_cap_is_a_setting(parley: Harness) -> None:
    from parley.app import create_app

    small = parley.context.settings.model_copy(update={"max_body_bytes": 2048})
    app = create_app(small, parley.clock, parley.context)
    token = (await parley.owner.post("/api/v1/people/owner/token")).json()["token"]
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://parley", headers=bearer(token)
        ) as client,
    ):
        response = await client.put("/api/v1/nodes/local/engram", json={"engram": "e" * 4096})
    assert response.status_code == 413


async def test_a_wrong_method_is_405_with_allow(parley: Harness) -> None:
    response = await parley.owner.put("/api/v1/agents")
    assert response.status_code == 405
    assert set(response.headers["allow"].replace(" ", "").split(",")) == {"GET", "HEAD", "POST"}
    assert response.json()["error"] == "method_not_allowed"


async def test_openapi_lists_the_real_error_answers_not_422(parley: Harness) -> None:
    spec = (await parley.owner.get("/openapi.json")).json()
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            statuses = set(operation["responses"])
            assert "422" not in statuses, (method, path)
            if path.startswith("/api/v1/"):
                assert {"400", "401", "403", "404", "409", "413", "503"} <= statuses
                assert operation["security"] == [{"bearer": []}]
                error = operation["responses"]["404"]["content"]["application/json"]
                assert error["schema"] == {"$ref": "#/components/schemas/Error"}


async def test_numbers_out_of_range_are_400_or_404_never_500(parley: Harness) -> None:
    for run_id in ("2147483648", "9223372036854775808", "99999999999999999999999", "-1", "0"):
        for method, path in (("GET", ""), ("POST", "/stop")):
            response = await parley.owner.request(method, f"/api/v1/runs/{run_id}{path}")
            assert response.status_code in (400, 404), (run_id, path, response.text)
        task = await parley.owner.get(f"/api/v1/tasks/{run_id}")
        assert task.status_code in (400, 404), (run_id, task.text)
    template = {"name": "t", "node": "local", "template": True}
    for extra in (
        {"surge_threshold": 2**40},
        {"surge_threshold": 0},
        {"surge_threshold": 3, "clone_lifetime": "999999999999999999999h"},
        {"surge_threshold": 3, "clone_lifetime": "9" * 100 + "s"},
        {"max_sessions": 2**70},
    ):
        response = await parley.owner.post("/api/v1/agents", json={**template, **extra})
        assert response.status_code == 400, (extra, response.text)
    assert (await parley.owner.get("/api/v1/agents/t")).status_code == 404
    assert (await parley.owner.get("/api/v1/runs?limit=99999999999999999999")).status_code == 400


async def test_a_value_the_store_cannot_hold_is_invalid_not_an_outage(parley: Harness) -> None:
    from parley.errors import Invalid

    store = parley.context.store
    try:
        async with store.transaction() as tx:
            await tx.runs.by_id(2**63)
    except Invalid as error:
        assert "cannot be stored" in error.message
    else:
        raise AssertionError("an id past 2^63 reached the store and came back")


async def test_every_text_field_has_a_documented_cap(parley: Harness) -> None:
    spec = (await parley.owner.get("/openapi.json")).json()
    uncapped = []
    for name, schema in spec["components"]["schemas"].items():
        if not name.endswith("In"):
            continue  # answers, not what the API takes
        for field, shape in schema.get("properties", {}).items():
            shapes = [shape, *shape.get("anyOf", [])]
            is_text = any(s.get("type") == "string" for s in shapes)
            if is_text and not any("maxLength" in s or "enum" in s for s in shapes):
                uncapped.append(f"{name}.{field}")
    assert uncapped == []


async def test_caps_hold_for_people_and_runs_alike(parley: Harness) -> None:
    from parley.text import MAX_NOTE, MAX_REASON

    await parley.hire("keeper")
    long_note = {"note": "n" * (MAX_NOTE + 1)}
    response = await parley.owner.post("/api/v1/agents/keeper/memory", json=long_note)
    assert response.status_code == 400 and "memory note" in response.json()["message"]
    long_reason = {"reason": "r" * (MAX_REASON + 1)}
    for verb in ("warnings", "retire"):
        response = await parley.owner.post(f"/api/v1/agents/keeper/{verb}", json=long_reason)
        assert response.status_code == 400, (verb, response.text)
    assert (await parley.agent("keeper"))["lifecycle"] == "active"
