"""What every page's route depends on: the web's parts, the person signed in (or a way to sign
in), and for a form, its checks: the same origin, the form token, then its fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, Request

from parley.api.deps import Ctx as Ctx  # the pages use the API's context dependency
from parley.api.deps import get_context
from parley.errors import Forbidden, Unavailable
from parley.web.forms import Form, read_form
from parley.web.live import Pulse
from parley.web.render import Pages
from parley.web.session import COOKIE, Sessions, SignedIn


@dataclass
class Web:
    sessions: Sessions
    pages: Pages
    pulse: Pulse


class SignInFirst(Exception):  # a redirect, not an error of the tree
    """A page asked for without a sign-in: answered with the way to the sign-in page."""

    def __init__(self, then: str) -> None:
        super().__init__(then)
        self.then = then


def mark_page(request: Request) -> None:
    """Errors on this request are shown as a page, not as the API's JSON."""
    request.state.page = True


def web_of(request: Request) -> Web:
    web = getattr(request.app.state, "web", None)
    if not isinstance(web, Web):
        raise Unavailable("Parley is still starting")
    return web


async def viewer(request: Request) -> SignedIn:
    context = await get_context(request)
    signed_in = await web_of(request).sessions.signed_in(context.store, request.cookies.get(COOKIE))
    if signed_in is None:
        here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise SignInFirst(here)
    request.state.viewer = signed_in
    return signed_in


@dataclass(frozen=True)
class Posted:
    viewer: SignedIn
    form: Form


def check_same_origin(request: Request) -> None:
    """A browser names where a post comes from (Origin, or at least Referer); from anywhere
    but this page, it is refused whatever it carries."""
    said = request.headers.get("origin") or request.headers.get("referer")
    if not said or said == "null":
        if said == "null":
            raise Forbidden("a form posted from an opaque origin is refused")
        return  # not a browser (a script with the cookie and the form token)
    if same_origin_path(request, said) is None:
        raise Forbidden("a form posted from another site is refused")


def same_origin_path(request: Request, url: str | None) -> str | None:
    """``url``'s path and query when it is a page of this site, else None."""
    if not url:
        return None
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != f"{request.url.scheme}://{request.url.netloc}":
        return None
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


async def posted(request: Request, signed_in: Annotated[SignedIn, Depends(viewer)]) -> Posted:
    check_same_origin(request)
    form = await read_form(request)
    web_of(request).sessions.check_form_token(signed_in, form.get("form_token") or None)
    request.state.form = form  # a refusal puts it back on its page (web/errors.py)
    return Posted(signed_in, form)


# Dependencies are coroutines (see parley/api/deps.py); these two wrap what is also called
# outside one.
async def as_page(request: Request) -> None:
    mark_page(request)


async def _web(request: Request) -> Web:
    return web_of(request)


WebParts = Annotated[Web, Depends(_web)]
Viewer = Annotated[SignedIn, Depends(viewer)]
Post = Annotated[Posted, Depends(posted)]


def sign_in_path(then: str) -> str:
    return "/signin" if then in {"", "/"} else f"/signin?then={quote(then, safe='/')}"
