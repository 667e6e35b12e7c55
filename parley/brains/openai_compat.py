"""Brains for servers speaking OpenAI's chat-completions API: OpenAI, Ollama, vLLM, llama.cpp."""

from __future__ import annotations

from openai import AsyncOpenAI, DefaultAsyncHttpxClient
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

from parley.brains.brain import Brain
from parley.brains.model_brain import ModelBrain
from parley.tls import trusted

# Local servers ignore the key, but the SDK refuses to start without one.
NO_KEY = "not-needed"


def openai_brain(
    model_name: str,
    base_url: str,
    api_key: str | None,
    *,
    max_retries: int = 2,
    timeout: float = 600.0,
) -> Brain:
    """A brain for ``model_name`` at ``base_url`` (which includes ``/v1``, as OpenAI's does).

    ``max_retries`` is the SDK's own retry of connection errors, 429 and 5xx, with backoff.
    """
    client = AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or NO_KEY,
        max_retries=max_retries,
        timeout=timeout,
        http_client=DefaultAsyncHttpxClient(verify=trusted()),  # the SDK's, the CAs read once
    )
    model = OpenAIChatModel(model_name, provider=OpenAIProvider(openai_client=client))
    return ModelBrain(model, secrets=(api_key,), close=client.close)
