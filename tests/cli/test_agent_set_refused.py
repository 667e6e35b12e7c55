"""An engram past its cap or holding a NUL byte, given to `agent set` and to the API's PATCH:
refused in one plain line, the agent unchanged and no change recorded."""

from __future__ import annotations

import httpx
import pytest

from parley.text import MAX_ENGRAM
from tests.cli.test_runtime_commands import ok, ok_items, ok_json, run
from tests.served import Served

OVERSIZED = "x" * (MAX_ENGRAM + 1)
WITH_NUL = "keeps the minutes\x00 and then some"


def unchanged(served: Served) -> None:
    assert ok_json(served, "agent", "show", "scribe")["engram"] == "terse"
    assert ok_items(served, "agent", "changes", "scribe") == []


@pytest.mark.parametrize(
    ("engram", "message"),
    [
        (
            OVERSIZED,
            f"an engram holds at most {MAX_ENGRAM} characters, this one has {MAX_ENGRAM + 1}",
        ),
        (WITH_NUL, "engram contains a NUL byte"),
    ],
    ids=["oversized", "nul"],
)
def test_the_cli_refuses_it_in_one_line(served: Served, engram: str, message: str) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local", "--engram", "terse")
    # Through stdin: no command line can carry a NUL byte.
    refused = run(served, "agent", "set", "scribe", "--engram", "-", stdin=engram)
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.count("\n") == 1 and refused.stderr.startswith("error: ")
    assert message in refused.stderr, refused.stderr
    unchanged(served)


@pytest.mark.parametrize(
    ("engram", "message"),
    [
        (OVERSIZED, f"at most {MAX_ENGRAM} characters"),
        (WITH_NUL, "contains a NUL byte"),
    ],
    ids=["oversized", "nul"],
)
def test_the_api_refuses_it_with_400(served: Served, engram: str, message: str) -> None:
    ok(served, "agent", "hire", "scribe", "--node", "local", "--engram", "terse")
    answer = httpx.patch(
        f"{served.url}/api/v1/agents/scribe",
        json={"engram": engram, "max_sessions": 4},
        headers={"Authorization": f"Bearer {served.owner_token}"},
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "invalid" and message in answer.json()["message"]
    unchanged(served)  # the other setting of that request was not applied either
    assert ok_json(served, "agent", "show", "scribe")["max_sessions"] == 1
