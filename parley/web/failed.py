"""A form the library refused, shown again where it was filled in: the page it came from, with
what was typed put back and the message beside the field it names (and once at the top, so a
message whose field the page does not show is never hidden).

The refused form is kept in this process for the next page its person opens (at most
``KEPT_SECONDS``, ``MAX_KEPT`` forms in all), keyed by the sign-in's form token: nothing of it
goes into a cookie, whose size would cut an engram short. A server restarted between the post
and the page shows the page without it, as a page reloaded later does."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from parley.clock import Clock

KEPT_SECONDS = 600
MAX_KEPT = 1000
UNSENT = frozenset({"form_token"})


@dataclass(frozen=True)
class FailedForm:
    action: str  # the path it was posted to: the page's form with this action is the one
    message: str
    field: str | None
    values: dict[str, list[str]]

    def typed(self, name: str) -> str | None:
        values = self.values.get(name)
        return values[-1] if values else None


class FailedForms:
    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._kept: OrderedDict[str, tuple[datetime, FailedForm]] = OrderedDict()

    def keep(self, key: str, failed: FailedForm) -> None:
        values = {name: given for name, given in failed.values.items() if name not in UNSENT}
        self._kept[key] = (self._clock.now(), replace(failed, values=values))
        self._kept.move_to_end(key)
        while len(self._kept) > MAX_KEPT:
            self._kept.popitem(last=False)

    def take(self, key: str) -> FailedForm | None:
        kept = self._kept.pop(key, None)
        if kept is None:
            return None
        at, failed = kept
        return failed if self._clock.now() - at <= timedelta(seconds=KEPT_SECONDS) else None


def _failed(context: Context, action: str) -> FailedForm | None:
    failed = context.get("failed")
    return failed if isinstance(failed, FailedForm) and failed.action == action else None


@pass_context
def typed(context: Context, action: str, name: str, default: Any = "") -> str:
    """What was typed in the field, when this form was refused; else ``default``."""
    failed = _failed(context, action)
    given = failed.typed(name) if failed else None
    return str(default if default is not None else "") if given is None else given


@pass_context
def ticked(context: Context, action: str, name: str, value: str, default: bool) -> bool:
    """A checkbox (or an option) as it was sent, when this form was refused."""
    failed = _failed(context, action)
    return value in failed.values.get(name, []) if failed else default


@pass_context
def error_for(context: Context, action: str, name: str) -> Markup:
    """The message beside the field it names (``id="error-NAME"``, which the field's
    ``aria-describedby`` names; see ``invalid_for``)."""
    failed = _failed(context, action)
    if failed is None or failed.field != name:
        return Markup("")
    return Markup('<p class="field-error" id="error-{}">{}</p>').format(name, failed.message)


@pass_context
def invalid_for(context: Context, action: str, name: str, hint: str = "") -> Markup:
    """The field's attributes: its hint's id, and when the message is about it, the message's
    too, so that both are read out with the field."""
    failed = _failed(context, action)
    if failed is None or failed.field != name:
        return Markup(' aria-describedby="{}"').format(hint) if hint else Markup("")
    described = f"error-{name} {hint}".strip()
    return Markup(' aria-invalid="true" aria-describedby="{}"').format(described)


HELPERS = {"typed": typed, "ticked": ticked, "error_for": error_for, "invalid_for": invalid_for}
