"""What a caller gives an action, checked against the table before anything acts on it: the
same check for a model's tool call, a rule's act, a node's deferred call, an HTTP body and the
command line. A wrong, extra or missing argument is an Invalid that says which."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from parley.actions.table import ACTIONS, Action, Arguments, Kind, Param
from parley.errors import Invalid
from parley.text import refuse_nul


def action_named(name: str) -> Action:
    action = ACTIONS.get(name)
    if action is None:
        raise Invalid(f"there is no action {name!r}; the actions are {', '.join(ACTIONS)}")
    return action


def check_names(action: Action, given: Iterable[str]) -> None:
    """Every required parameter is given, and nothing else."""
    given = list(given)
    missing = [p.name for p in action.params if p.required and p.name not in given]
    if missing:
        raise Invalid(f"{action.name} needs {', '.join(missing)}")
    known = {p.name for p in action.params}
    for name in given:
        if name not in known:
            raise Invalid(f"{action.name} takes no argument {name!r}")


def bind(name: str, given: Mapping[str, object]) -> Arguments:
    """``given`` as the action ``name`` takes it: each parameter of its type, text within its
    cap and without a NUL byte, defaults filled in."""
    action = action_named(name)
    check_names(action, given)
    return {p.name: _checked(action, p, given.get(p.name, p.default)) for p in action.params}


def _checked(action: Action, param: Param, value: object) -> str | bool:
    if param.kind is Kind.FLAG and isinstance(value, bool):
        return value
    if param.kind is not Kind.FLAG and isinstance(value, str):
        cap = param.max_length
        if cap is not None and len(value) > cap:
            # Every caller, a model's tool call too, is bound as the API's bodies are.
            raise Invalid(
                f"{action.name}: {param.name} is longer than {cap} characters ({len(value)})",
                field=param.name,
            )
        return refuse_nul(value, f"{action.name}: {param.name}")
    raise Invalid(
        f"{action.name}: {param.name} must be a {param.kind.json_type}, not {_shown(value)}"
    )


def _shown(value: object) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
