"""From a brain spec to a Brain, with the node's settings (model endpoints, stop grace)."""

from __future__ import annotations

from pathlib import Path

from parley.brains.brain import Brain
from parley.brains.command import CommandBrain
from parley.brains.confinement import node_policy
from parley.brains.offline import OfflineBrain
from parley.brains.scripted import ScriptedBrain
from parley.brains.spec import parse_brain_spec
from parley.errors import Invalid
from parley.extras import install_command
from parley.settings import Settings


def brain_for(spec_text: str, settings: Settings) -> Brain:
    spec = parse_brain_spec(spec_text)
    if spec.kind == "offline":
        return OfflineBrain()
    if spec.kind == "scripted":
        return ScriptedBrain(Path(spec.argument))
    if spec.kind == "command":
        return CommandBrain(spec.argument, settings.stop_grace_seconds, node_policy(settings))
    if spec.kind == "openai":
        from parley.brains.openai_compat import openai_brain

        key = settings.openai_api_key
        return openai_brain(
            spec.argument, settings.openai_base_url, key.get_secret_value() if key else None
        )
    if spec.kind == "anthropic":
        try:  # an optional extra
            from parley.brains.anthropic_brain import anthropic_brain
        except ImportError as exc:
            raise Invalid(f"anthropic brains need: {install_command('anthropic')}") from exc
        key = settings.anthropic_api_key
        return anthropic_brain(
            spec.argument, settings.anthropic_base_url, key.get_secret_value() if key else None
        )
    raise Invalid(f"no brain of kind {spec.kind!r}")
