"""What a running turn may do, authorised by its run token: one request body per action of the
table (``parley.actions.table``), derived from it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, create_model

from parley.actions.table import ACTIONS, Action
from parley.api.schemas.base import Body, capped


def _request(action: Action) -> type[Body]:
    fields: dict[str, Any] = {
        param.name: (
            param.kind.python_type,
            Field(
                ... if param.required else param.default,
                description=param.help,
                json_schema_extra=capped(param.max_length),
            ),
        )
        for param in action.params
    }
    name = "".join(part.title() for part in action.name.split("_")) + "In"
    return create_model(name, __base__=Body, __doc__=action.help, **fields)


# The body of /act/<path> for each action, by the action's name.
REQUESTS: dict[str, type[Body]] = {name: _request(action) for name, action in ACTIONS.items()}


class ActOut(BaseModel):
    result: str
