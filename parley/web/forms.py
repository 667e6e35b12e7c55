"""A page's form, as the browser posts it (``application/x-www-form-urlencoded``): read once,
checked for its size (the API's guard has capped the body already), NUL bytes and fields."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl

from fastapi import Request

from parley.errors import Invalid
from parley.numbers import whole_number
from parley.text import refuse_nul

FORM_TYPE = "application/x-www-form-urlencoded"
MAX_FIELDS = 100


@dataclass(frozen=True)
class Form:
    fields: dict[str, list[str]]

    def get(self, name: str, default: str = "") -> str:
        values = self.fields.get(name)
        return values[-1] if values else default

    def required(self, name: str, label: str | None = None) -> str:
        value = self.get(name).strip()
        if not value:
            raise Invalid(f"{label or name} is required", field=name)
        return value

    def flag(self, name: str) -> bool:
        return self.get(name) in {"on", "true", "1", "yes"}

    def number(self, name: str, label: str, low: int, high: int) -> int | None:
        given = self.get(name).strip()
        if not given:
            return None
        try:
            return whole_number(given, label, low, high)
        except Invalid as exc:
            raise Invalid(exc.message, field=name) from None

    def all(self, name: str) -> list[str]:
        return [value for value in self.fields.get(name, []) if value.strip()]


async def read_form(request: Request) -> Form:
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    body = await request.body()
    if body and kind != FORM_TYPE:
        raise Invalid(f"a page's form is sent as {FORM_TYPE}, not {kind or 'no type'}")
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except UnicodeDecodeError as exc:
        raise Invalid("the form is not UTF-8") from exc
    except ValueError as exc:  # more fields than MAX_FIELDS
        raise Invalid(f"a form has at most {MAX_FIELDS} fields") from exc
    fields: dict[str, list[str]] = {}
    for name, value in pairs:
        refuse_nul(name, "a field's name")
        refuse_nul(value, name)
        fields.setdefault(name, []).append(value.replace("\r\n", "\n"))
    return Form(fields)
