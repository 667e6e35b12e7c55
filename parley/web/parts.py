"""A page's live part, read again as the person signed in now: their sign-in may have ended
(the stream then says so and ends), or what they read been deleted since."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from markupsafe import escape

from parley.errors import ParleyError
from parley.people.model import Person
from parley.web.live import live_part
from parley.web.routing import Ctx, Web
from parley.web.session import COOKIE

Read = Callable[[Person], Awaitable[dict[str, Any]]]


def live_values(request: Request, ctx: Ctx, web: Web, template: str, read: Read) -> Response:
    """A live part: ``template`` with what ``read`` gives, read again as the person signed in
    now (their sign-in may have ended, or what they read been deleted since)."""

    async def render() -> str | None:
        again = await web.sessions.signed_in(ctx.store, request.cookies.get(COOKIE))
        if again is None:
            return None
        try:
            values = await read(again.person)
        except ParleyError as exc:  # e.g. deleted since: readable by owners only
            return f'<p class="error" role="alert">{escape(exc.message)}</p>'
        return web.pages.html(template, viewer=again, **values)

    return live_part(request, web.pulse, render)
