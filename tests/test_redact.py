"""Keys and tokens are taken out of text shown to people and logged; ordinary words stay."""

from __future__ import annotations

import os

import nkeys
import pytest

from parley.redact import redact
from parley.tokens import new_peer_token, new_run_token, new_token

SHAPED = [
    (
        "Incorrect API key provided: sk-proj-Ab3dEf6hIj9kLm",
        "Incorrect API key provided: sk-[redacted]",
    ),
    ("key sk-ant-api03-xYz_12-34567890 refused", "key sk-[redacted] refused"),
    ("masked: sk-abc*********************wxyz.", "masked: sk-[redacted]."),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.x", "Authorization: Bearer [redacted]"),
    ("GET /v1/models?api_key=hunter22&x=1", "GET /v1/models?api_key=[redacted]&x=1"),
    ('{"api_key": "hunter22", "model": "m"}', '{"api_key": "[redacted]", "model": "m"}'),
    ("x-api-key: abc.def-123", "x-api-key: [redacted]"),
    ("refused Bearer abc.def-123.", "refused Bearer [redacted]."),
    ("access_token=abcd1234", "access_token=[redacted]"),
    ("http://ada:s3cret@proxy.local:8080/v1", "http://ada:[redacted]@proxy.local:8080/v1"),
]


@pytest.mark.parametrize(("text", "expected"), SHAPED)
def test_key_shapes_are_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_parley_s_own_tokens_are_redacted() -> None:
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER).decode()  # a .creds' key
    tokens = (new_token(), new_run_token(), new_peer_token(), seed)
    for token in tokens:
        shown = redact(f"the command printed {token} on stderr")
        assert token not in shown
        assert shown.endswith("[redacted] on stderr")


def test_configured_secrets_are_redacted_by_value_whatever_their_shape() -> None:
    shown = redact(
        "refused key local-key-3f9a1c77e2 (twice: local-key-3f9a1c77e2)",
        ["local-key-3f9a1c77e2", None],
    )
    assert shown == "refused key [redacted] (twice: [redacted])"


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "the task-runner asked sk-learn about a risk-free plan, bearer of news; a role token"
        " without a run has no topic: no valid run token. HTTP 401 at http://127.0.0.1:8700/v1"
    )
    assert redact(text, ["short", ""]) == text
