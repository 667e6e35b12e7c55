"""The one error tree of Parley.

Every failure a caller can cause or see is one of these; each edge maps them once:
HTTP in ``api/errors.py``, the CLI in ``cli/output.py``.

    ParleyError
    ├── Invalid        the input is malformed or out of range          HTTP 400, exit 2
    │   └── TooLarge   a request body over the server's cap              HTTP 413, exit 2
    ├── Unauthorized   no credential, or one we do not know            HTTP 401, exit 5
    │   └── Throttled  too many of those from one address, for now     HTTP 429, exit 5
    ├── Forbidden      known caller, not allowed to do this            HTTP 403, exit 5
    ├── NotFound       no such thing (or not visible to the caller)    HTTP 404, exit 3
    ├── Conflict       the thing exists but its state refuses this     HTTP 409, exit 4
    ├── Unavailable    a needed part (node, store, server) is down     HTTP 503, exit 6
    └── TurnFailed     a turn the CLI waited for ended failed          (CLI only), exit 7
"""

from __future__ import annotations

from typing import Any, ClassVar


class ParleyError(Exception):
    """Base of every error Parley raises on purpose; carries a code and fields."""

    code: ClassVar[str] = "error"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def to_dict(self) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, **self.fields}


class Invalid(ParleyError):
    code = "invalid"


class TooLarge(Invalid):
    code = "too_large"


class Unauthorized(ParleyError):
    code = "unauthorized"


class Throttled(Unauthorized):
    """An address that failed too often to sign in or to name a token: refused for a while,
    whatever it sends (``retry_after_seconds``)."""

    code = "throttled"


class Forbidden(ParleyError):
    code = "forbidden"


class NotFound(ParleyError):
    code = "not_found"


class Conflict(ParleyError):
    code = "conflict"


class Unavailable(ParleyError):
    """Transient: tried again. A service that said how long to wait (a 429's ``retry_after``)
    gives ``retry_after_seconds``, and no retry comes sooner."""

    code = "unavailable"


class Contended(Unavailable):
    """The store rolled a transaction back to break a deadlock (or a serialization conflict):
    nothing of it was kept, and the same work tried again may pass. Transient, like an outage:
    what retries through an outage retries through this."""


class TurnFailed(ParleyError):
    """Raised by the CLI only: the server answered, the agent's turn did not."""

    code = "turn_failed"


KINDS = (Invalid, TooLarge, Unauthorized, Throttled, Forbidden, NotFound, Conflict, Unavailable)
ERRORS_BY_CODE: dict[str, type[ParleyError]] = {cls.code: cls for cls in KINDS}
