"""A brain is checked where it runs: a scripted brain's file on its node's disk, a model brain's
API key in its node's settings. The hub asks the agent's node when hiring or changing a brain;
a node that cannot be reached now checks it at the turn, and the hire says so."""

from __future__ import annotations

from pydantic import ValidationError

from parley.brains.keys import key_notices
from parley.brains.spec import check_brain, parse_brain_spec
from parley.broker.port import Broker, Subscription
from parley.errors import Invalid, ParleyError
from parley.node.messages import BrainCheck, BrainCheckReply, brain_check_subject
from parley.settings import Settings

CHECK_TIMEOUT = 5.0


async def check_on_node(
    broker: Broker, node: str, brain: str, allow_missing_key: bool
) -> list[str]:
    """The node's notices for ``brain``; Invalid with the node's reason if it refuses it."""
    request = BrainCheck(brain=brain, allow_missing_key=allow_missing_key)
    try:
        raw = await broker.request(
            brain_check_subject(node), request.model_dump_json().encode(), CHECK_TIMEOUT
        )
        reply = BrainCheckReply.model_validate_json(raw)
    except (ParleyError, ValidationError):
        return [f"notice: node {node} cannot be asked now; brain {brain} is checked at its turn"]
    if reply.refused is not None:
        raise Invalid(f"on node {node}: {reply.refused}", field="brain")
    return reply.notices


class BrainChecks:
    """The node's side: answers the hub's questions with this machine's disk and settings."""

    def __init__(self, node: str, broker: Broker, settings: Settings) -> None:
        self._node, self._broker, self._settings = node, broker, settings
        self._subscription: Subscription | None = None

    async def start(self) -> None:
        subject = brain_check_subject(self._node)
        self._subscription = await self._broker.subscribe(subject, self._answer)

    async def stop(self) -> None:
        subscription, self._subscription = self._subscription, None
        if subscription is not None:
            await subscription.unsubscribe()

    async def _answer(self, data: bytes) -> bytes:
        return (await self._check(data)).model_dump_json().encode()

    async def _check(self, data: bytes) -> BrainCheckReply:
        try:
            asked = BrainCheck.model_validate_json(data)
            spec = await check_brain(parse_brain_spec(asked.brain))
            notices = key_notices(spec, self._settings, asked.allow_missing_key)
        except ValidationError as exc:
            return BrainCheckReply(refused=f"a malformed brain check: {exc.error_count()} error(s)")
        except ParleyError as exc:
            return BrainCheckReply(refused=exc.message)
        return BrainCheckReply(notices=notices)
