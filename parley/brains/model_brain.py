"""An LLM brain: one turn is a loop of streamed model requests, each tool call run as an action.

It uses pydantic-ai's direct model API (``model_request_stream``) rather than an ``Agent``: the
loop is a dozen lines, and owning it keeps three things explicit that an Agent would hide behind
its own retry and output machinery — a refused action is an ordinary tool result the model reads
(not a retry), the cap on requests per turn, and the text streamed as it arrives.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.direct import model_request_stream
from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    SystemPromptPart,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from parley.actions.arguments import bind
from parley.actions.table import ACTIONS
from parley.brains.brain import Actions, OutsideTool, Said, Stream, Turn, TurnOutcome
from parley.brains.outside import offered_names
from parley.brains.prompt import new_text, said_text, system_prompt, transcript
from parley.errors import Invalid, ParleyError, Unavailable
from parley.redact import redact

# A model that keeps calling tools must still end its turn; past this many requests it ends with
# the last text it wrote.
MAX_REQUESTS = 20


class ModelBrain:
    """A brain backed by any pydantic-ai ``Model`` (see openai_compat.py, anthropic_brain.py)."""

    def __init__(
        self,
        model: Model,
        *,
        settings: ModelSettings | None = None,
        max_requests: int = MAX_REQUESTS,
        secrets: tuple[str | None, ...] = (),
        close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._model = model
        self._close = close  # the provider client's, for a node that stops
        self._settings = settings
        self._max_requests = max_requests
        # Taken out of every failure: the reason is shown to people and logged.
        self._secrets = secrets

    async def aclose(self) -> None:
        if self._close is not None:
            await self._close()

    async def think(self, turn: Turn, actions: Actions, stream: Stream) -> TurnOutcome:
        messages = opening_messages(turn)
        outside = offered_names(turn.outside_tools)
        offered = tool_definitions(turn.tools) + _outside_definitions(turn.outside_tools, outside)
        parameters = ModelRequestParameters(function_tools=offered)
        reply = ""
        for _ in range(self._max_requests):
            response = await self._request(messages, parameters, stream)
            messages.append(response)
            reply = response.text or reply
            calls = [part for part in response.parts if isinstance(part, ToolCallPart)]
            if not calls:
                break
            results = [await _run_tool(call, turn.tools, outside, actions) for call in calls]
            messages.append(ModelRequest(parts=results))
        return TurnOutcome(reply=reply)

    async def _request(
        self, messages: list[ModelMessage], parameters: ModelRequestParameters, stream: Stream
    ) -> ModelResponse:
        try:
            async with model_request_stream(
                self._model,
                messages,
                model_settings=self._settings,
                model_request_parameters=parameters,
            ) as response:
                async for event in response:
                    chunk = _text_of(event)
                    if chunk:
                        await stream(chunk)
                return response.get()
        except (ModelAPIError, UnexpectedModelBehavior) as error:
            raise Unavailable(self._failure(error), model=self._model.model_name) from error

    def _failure(self, error: Exception) -> str:
        # Name the provider, URL and model: the person fixing it needs to know which one is down.
        # A provider's error may quote the key it refused: the reason is shown and logged.
        where = self._model.base_url or "its default URL"
        return redact(
            f"the {self._model.system} provider at {where} failed for model "
            f"{self._model.model_name!r}: {_why(error)}",
            self._secrets,
        )


def _why(error: Exception) -> str:
    if isinstance(error, ModelHTTPError):
        return f"HTTP {error.status_code}: {error.body}"
    # A connection failure's useful words (refused, timed out, DNS) sit at the end of the chain.
    reasons: list[str] = []
    cause: BaseException | None = error
    while cause is not None and len(reasons) < 8:  # a bound, in case a chain loops
        reason = str(cause) or type(cause).__name__
        if reason not in reasons:
            reasons.append(reason)
        cause = cause.__cause__ or cause.__context__
    return "; ".join(reasons)


def opening_messages(turn: Turn) -> list[ModelMessage]:
    """System prompt, the session so far (own lines as the model's), then the new text."""
    messages: list[ModelMessage] = []
    pending: list[ModelRequestPart] = [SystemPromptPart(system_prompt(turn))]
    others: list[Said] = []
    for said in turn.history:
        if said.author != turn.agent:
            others.append(said)
            continue
        if others:
            # Consecutive lines from others become one user message: some providers refuse two
            # user messages in a row.
            pending.append(UserPromptPart(transcript(others)))
            others = []
        messages.append(ModelRequest(parts=pending))
        messages.append(ModelResponse(parts=[TextPart(said_text(said))]))
        pending = []
    if others:
        pending.append(UserPromptPart(transcript(others)))
    pending.append(UserPromptPart(new_text(turn) or "(no new text)"))
    messages.append(ModelRequest(parts=pending))
    return messages


def tool_definitions(names: tuple[str, ...]) -> list[ToolDefinition]:
    """The run's actions as the model's tools, as the table defines them."""
    return [
        ToolDefinition(
            name=name,
            description=ACTIONS[name].described(),
            parameters_json_schema=ACTIONS[name].json_schema(),
        )
        for name in names
        if name in ACTIONS
    ]


def _outside_definitions(
    tools: tuple[OutsideTool, ...], named: dict[str, str]
) -> list[ToolDefinition]:
    by_name = {tool.name: tool for tool in tools}
    return [
        ToolDefinition(
            name=wire,
            description=f"{qualified}: {by_name[qualified].description}",
            parameters_json_schema=dict(by_name[qualified].schema),
        )
        for wire, qualified in named.items()
    ]


def _text_of(event: object) -> str:
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return ""


async def _run_tool(
    call: ToolCallPart, allowed: tuple[str, ...], outside: dict[str, str], actions: Actions
) -> ToolReturnPart:
    try:
        if call.tool_name in outside:
            result = await actions.act(outside[call.tool_name], _arguments(call))
        else:
            result = await _call_action(call, allowed, actions)
    except ParleyError as refused:
        # The model must learn why, and may try something else: the turn goes on. Sent as a plain
        # result, not outcome="failed": pydantic-ai would wrap that as {"error": ...} for OpenAI,
        # and the words should read the same on every provider.
        result = f"refused: {refused.message}"
    return ToolReturnPart(call.tool_name, result, call.tool_call_id)


async def _call_action(call: ToolCallPart, allowed: tuple[str, ...], actions: Actions) -> str:
    name = call.tool_name
    offered = [tool for tool in allowed if tool in ACTIONS]
    if name not in offered:
        raise Invalid(f"there is no tool {name!r}; the tools are {', '.join(offered)}")
    return await actions.act(name, bind(name, _arguments(call)))


def _arguments(call: ToolCallPart) -> dict[str, Any]:
    try:
        return call.args_as_dict(raise_if_invalid=True)
    except (ValueError, AssertionError):
        raise Invalid(f"the arguments of {call.tool_name} are not a JSON object") from None
