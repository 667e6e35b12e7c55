"""Brains on Anthropic's Messages API (an optional extra: ``parley-home[anthropic]``)."""

from __future__ import annotations

from parley.brains.brain import Brain
from parley.brains.model_brain import ModelBrain
from parley.errors import Unavailable
from parley.extras import install_command
from parley.tls import trusted

# Anthropic requires a reply budget on every request; this one fits the current models.
MAX_TOKENS = 8192
NO_KEY = "not-needed"


def anthropic_brain(
    model_name: str,
    base_url: str,
    api_key: str | None,
    *,
    max_retries: int = 2,
    timeout: float = 600.0,
    max_tokens: int = MAX_TOKENS,
) -> Brain:
    """A brain for ``model_name`` at ``base_url`` (without ``/v1``: https://api.anthropic.com).

    ``max_retries`` is the SDK's own retry of connection errors, 429 and 5xx, with backoff.
    """
    try:
        # Imported here so an installation without the extra still starts and says what is missing.
        from anthropic import AsyncAnthropic, DefaultAsyncHttpxClient
        from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
        from pydantic_ai.providers.anthropic import AnthropicProvider
    except ImportError as error:
        raise Unavailable(
            f"anthropic brains need the anthropic extra: {install_command('anthropic')} ({error})"
        ) from error
    # A proxy or local server may need no key; the SDK refuses to send a request without one.
    client = AsyncAnthropic(
        base_url=base_url,
        api_key=api_key or NO_KEY,
        max_retries=max_retries,
        timeout=timeout,
        http_client=DefaultAsyncHttpxClient(verify=trusted()),  # the SDK's, the CAs read once
    )
    model = AnthropicModel(model_name, provider=AnthropicProvider(anthropic_client=client))
    return ModelBrain(
        model,
        settings=AnthropicModelSettings(max_tokens=max_tokens),
        secrets=(api_key,),
        close=client.close,
    )
