"""The one HTTP client to peer installations: the handshake, and batches of frames. Whatever
the peer answers is turned into the error tree here: a transport failure, a timeout or a 5xx is
``Unavailable`` (retried with backoff), a refusal a final error with the peer's own words (a
401 with the reason it gives, if any)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import ValidationError

from parley.errors import ERRORS_BY_CODE, Invalid, ParleyError, Unauthorized, Unavailable
from parley.federation.frames import FrameVerdict, Verdicts, WireFrame
from parley.federation.model import REVOKED, PeerEndpoint
from parley.redact import redact
from parley.tls import ClientOnFirstUse

HANDSHAKE = "/federation/v1/handshake"
FRAMES = "/federation/v1/frames"
TIMEOUT = httpx.Timeout(30.0, connect=5.0)


class PeerClient:
    def __init__(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        # Few requests in flight per connection (one batch at a time): httpx keeps up there.
        self._http = ClientOnFirstUse(timeout=TIMEOUT, transport=transport)

    async def close(self) -> None:
        await self._http.aclose()

    async def handshake(self, url: str, secret: str, own_url: str, token: str) -> str:
        """Offer ``token`` (issued for the peer) with the invite's secret; the peer's token."""
        body = {"secret": secret, "url": own_url, "token": token}
        answer = await self._post(url + HANDSHAKE, body, None)
        received = answer.get("token") if isinstance(answer, dict) else None
        if not isinstance(received, str):
            raise Invalid(f"the peer at {url} answered the handshake without a token")
        return received

    async def send(self, peer: PeerEndpoint, frames: Sequence[WireFrame]) -> list[FrameVerdict]:
        """Post one batch; its verdicts, one per frame in frame order."""
        body = {"frames": [frame.model_dump() for frame in frames]}
        answer = await self._post(peer.url + FRAMES, body, peer.token)
        try:
            verdicts = Verdicts.model_validate(answer).verdicts
        except ValidationError as exc:
            raise Unavailable(f"the peer {peer.name} answered with no verdicts we read") from exc
        if len(verdicts) != len(frames):
            raise Unavailable(
                f"the peer {peer.name} answered {len(verdicts)} verdicts for {len(frames)} frames"
            )
        return verdicts

    async def _post(self, url: str, body: dict[str, Any], token: str | None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            response = await self._http.http.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise Unavailable(
                f"cannot reach the peer at {url}: {exc or type(exc).__name__}"
            ) from exc
        if response.is_success:
            try:
                return response.json()
            except ValueError as exc:
                raise Unavailable(f"the peer at {url} answered with no JSON") from exc
        raise _refusal(url, response)


def _refusal(url: str, response: httpx.Response) -> ParleyError:
    """A peer's refusal in our tree; its 5xx (and anything unreadable) is transient."""
    reason = None
    try:
        answer = response.json()
        code, message = str(answer["error"]), redact(str(answer["message"]))[:500]
        reason = answer.get("reason")
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message = "error", f"HTTP {response.status_code}"
    said = f"the peer at {url} refused: {message}"
    if response.status_code >= 500 or response.status_code == 429:
        return Unavailable(said)
    if response.status_code == 401:  # "revoked" when the peer says so: the one for good
        return Unauthorized(said, **({"reason": REVOKED} if reason == REVOKED else {}))
    return ERRORS_BY_CODE.get(code, Invalid)(said)
