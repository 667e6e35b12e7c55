"""Model brains at their provider's own API need its key: without one, every turn would fail.

Checked when an agent is hired or its brain changed, against the settings of the server that
takes the request. A brain at another address (Ollama, vLLM, a proxy) may need no key and is
not checked; ``allow_missing_key`` accepts the brain anyway, with a warning, for a key that is
to be set later.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import SecretStr

from parley.brains.spec import BrainSpec
from parley.errors import Invalid
from parley.settings import Settings

# kind -> (the provider's host, the variable that gives its key)
PROVIDERS = {
    "openai": ("api.openai.com", "PARLEY_OPENAI_API_KEY"),
    "anthropic": ("api.anthropic.com", "PARLEY_ANTHROPIC_API_KEY"),
}


def key_notices(spec: BrainSpec, settings: Settings, allow_missing_key: bool) -> list[str]:
    """Nothing if the brain has what it needs; a warning if its key is missing and that is
    allowed; otherwise Invalid naming the variable to set."""
    variable = _missing_key(spec, settings)
    if variable is None:
        return []
    if not allow_missing_key:
        raise Invalid(
            f"brain {spec} needs an API key and this server has none: set {variable} where the"
            " server runs (or its line in parley.toml) and restart it, or give"
            " --allow-missing-key to accept the brain now",
            field="brain",
        )
    return [f"warning: no API key for brain {spec} ({variable}): its turns fail until one is set"]


def _missing_key(spec: BrainSpec, settings: Settings) -> str | None:
    if spec.kind not in PROVIDERS:
        return None
    host, variable = PROVIDERS[spec.kind]
    base_url, key = (
        (settings.openai_base_url, settings.openai_api_key)
        if spec.kind == "openai"
        else (settings.anthropic_base_url, settings.anthropic_api_key)
    )
    if urlsplit(base_url).hostname != host:
        return None  # a local or proxy server: it may need no key
    return None if key is not None and key.get_secret_value() else variable


def model_endpoints(settings: Settings) -> str:
    """One line for the log at start: where model brains' turns go, and whether a key is set
    for each (never the key, nor a password written in a URL)."""
    shown = [
        f"{kind} {_without_password(url)} ({'key set' if _is_set(key) else 'no key'})"
        for kind, url, key in (
            ("openai", settings.openai_base_url, settings.openai_api_key),
            ("anthropic", settings.anthropic_base_url, settings.anthropic_api_key),
        )
    ]
    return "model endpoints: " + ", ".join(shown)


def _is_set(key: SecretStr | None) -> bool:
    return key is not None and bool(key.get_secret_value())


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=f"{parts.username}:***@{host}").geturl()
