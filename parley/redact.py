"""Keys and tokens taken out of text that reaches people and logs: a provider's error often
quotes the request's key back (a 401 says which key it refused), a command brain's stderr may
print its run token."""

from __future__ import annotations

import re
from collections.abc import Iterable

REDACTED = "[redacted]"

# A secret shorter than this is not looked for by value: replacing a short word everywhere
# would mangle the text more than it could protect.
MIN_SECRET = 8

# Each keeps its first group (what kind of secret it was) and drops the rest.
_SHAPES = [
    # Provider keys (sk-…, sk-ant-…, masked ones too) and Parley's own tokens: people's (pk_),
    # runs' (prt_), the mesh's join token (pj_), peer installations' (ppt_).
    re.compile(r"\b((?:sk|pk|prt|pj|ppt)[-_])[A-Za-z0-9_*-]{8,}"),
    # An nkey seed: the private part of a node's or the hub's broker credentials (.creds).
    re.compile(r"\b(S[UAO])[A-Z2-7]{56}\b"),
    # A bearer token may be a JWT (dotted); a sentence's full stop after it is not part of it.
    re.compile(r"\b(Bearer\s+)[A-Za-z0-9._~+/=-]{7,}[A-Za-z0-9_~+/=-]", re.IGNORECASE),
    # api_key=…, "api_key": "…", x-api-key: …, access_token=…, password=…
    re.compile(
        r"""\b((?:x-)?api[-_]?key|(?:access|auth|refresh|run)[-_]?token|secret|password)"""
        r"""(["']?\s*[:=]\s*["']?)[^\s"',;&}]+""",
        re.IGNORECASE,
    ),
    re.compile(r"(://[^/\s:@]+:)[^@\s/]+(?=@)"),  # user:password@host in a URL
]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without ``secrets`` (configured keys, by value) and without anything shaped like
    a key or token (``sk-…``, ``Bearer …``, ``prt_…``, ``api_key=…``, ``"api_key": "…"``)."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, REDACTED)
    for shape in _SHAPES:
        text = shape.sub(_kept, text)
    return text


def _kept(match: re.Match[str]) -> str:
    return "".join(match.groups()) + REDACTED
