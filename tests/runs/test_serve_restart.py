"""A `parley serve` process killed outright mid-turn: at the next start the turn is failed with
reason 'interrupted' and its text is answered by the next run; nothing is lost."""

from __future__ import annotations

from pathlib import Path

import httpx

from bench.ports import free_port
from tests.cli.test_serve import serving
from tests.support import until


def _api(port: int, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}/api/v1",
        headers={"Authorization": f"Bearer {token}"},
        timeout=10,
    )


def test_a_killed_server_fails_the_interrupted_turn_and_answers_its_text_after_restart(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("otherwise: [{sleep: 60}]")
    port = free_port()
    with serving(tmp_path, port) as server:
        token = (tmp_path / "parley-data" / "private" / "owner-token").read_text().strip()
        with _api(port, token) as api:
            hired = api.post(
                "/agents", json={"name": "solo", "node": "local", "brain": f"scripted:{rules}"}
            )
            assert hired.status_code == 201, hired.text
            run_id = api.post("/conversations/solo/messages", json={"text": "first"}).json()[
                "run_id"
            ]
            assert until(
                lambda: api.get(f"/runs/{run_id}").json()["run"]["state"] == "running", within=20
            )
        server.kill()  # no shutdown of any kind
        server.wait(timeout=10)
    rules.write_text("otherwise: [{reply: 'handled {text}'}]")

    with serving(tmp_path, port), _api(port, token) as api:
        shown = api.get(f"/runs/{run_id}").json()["run"]
        assert (shown["state"], shown["reason"]) == ("failed", "interrupted")

        def answered() -> bool:
            messages = api.get("/conversations/solo").json()["messages"]["items"]
            return [m["body"] for m in messages if m["kind"] == "reply"] == ["handled first"]

        assert until(answered, within=20)
