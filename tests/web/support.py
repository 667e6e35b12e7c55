"""A browser's view of the page over the app's ASGI transport: sign in with a token, keep the
cookie, read the form token off a page, post forms as a browser does (same origin)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from parley.people.bootstrap import owner_token_path
from tests.support import Harness

ORIGIN = "http://parley"
FORM_TOKEN = re.compile(r'name="form_token" value="([0-9a-f]+)"')


class Browser:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.http = client
        self.form_token = ""

    async def get(self, path: str) -> httpx.Response:
        response = await self.http.get(path)
        found = FORM_TOKEN.search(response.text)
        if found:
            self.form_token = found.group(1)
        return response

    async def post(
        self,
        path: str,
        fields: dict[str, str] | list[tuple[str, str]] | None = None,
        page: str | None = None,
    ) -> httpx.Response:
        """A form posted from the page: with the form token, from the same origin; ``page``,
        the page it was filled in on, is named as a browser names it (Referer)."""
        pairs = list(fields.items()) if isinstance(fields, dict) else list(fields or [])
        if not self.form_token:
            await self.get("/")
        fields_by_name: dict[str, list[str]] = {}
        for name, value in [("form_token", self.form_token), *pairs]:
            fields_by_name.setdefault(name, []).append(value)  # a name given twice: both sent
        headers = {"Origin": ORIGIN} | ({"Referer": ORIGIN + page} if page else {})
        return await self.http.post(path, data=fields_by_name, headers=headers)


@asynccontextmanager
async def signed_in(parley: Harness, token: str | None = None) -> AsyncIterator[Browser]:
    """A browser signed in with ``token`` (the owner's by default)."""
    token = token or owner_token_path(parley.context.settings.data_dir).read_text().strip()
    async with httpx.AsyncClient(transport=parley.transport, base_url=ORIGIN) as client:
        answer = await client.post(
            "/signin", data={"token": token, "then": "/"}, headers={"Origin": ORIGIN}
        )
        assert answer.status_code == 303, answer.text
        browser = Browser(client)
        await browser.get("/")
        yield browser
