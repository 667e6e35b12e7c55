"""/signin and /signout: a token in a posted form (never in a URL) for the page's cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from parley.api.failures import FailureLimit, client_address
from parley.errors import Throttled, Unauthorized
from parley.web.forms import read_form
from parley.web.render import back_to
from parley.web.routing import Ctx, Post, WebParts, check_same_origin, mark_page
from parley.web.session import COOKIE

router = APIRouter(include_in_schema=False)


def _then(value: str) -> str:
    """Where to go after signing in: a path of this page only, never another site."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def failure_limit(request: Request) -> FailureLimit:
    """The API's own (``create_app``): a token refused here counts there, and the other way."""
    failures = request.app.state.failures
    assert isinstance(failures, FailureLimit)
    return failures


@router.get("/signin")
async def sign_in_page(request: Request, web: WebParts, then: str = "/") -> Response:
    mark_page(request)
    return web.pages.page(request, "signin.html", None, then=_then(then), error=None)


@router.post("/signin")
async def sign_in(request: Request, ctx: Ctx, web: WebParts) -> Response:
    mark_page(request)
    check_same_origin(request)
    form = await read_form(request)
    then = _then(form.get("then", "/"))
    failures = failure_limit(request)
    address = client_address(request.scope)
    try:
        failures.check(address)
        cookie = await web.sessions.sign_in(ctx.store, form.get("token").strip() or None)
    except Throttled as exc:
        wait = exc.fields["retry_after_seconds"]
        error = f"Too many tries that failed from here. Try again in {wait} s."
        page = web.pages.page(request, "signin.html", None, 429, then=then, error=error)
        page.headers["Retry-After"] = str(wait)
        return page
    except Unauthorized:
        failures.failed(address)
        error = "That token is not known here. Check it and try again."
        return web.pages.page(request, "signin.html", None, 401, then=then, error=error)
    response = back_to(then)
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=web.sessions.max_age_seconds,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return response


@router.post("/signout")
async def sign_out(request: Request, posted: Post, ctx: Ctx, web: WebParts) -> Response:
    """Ends the sign-in itself, not only this browser's copy of its cookie."""
    await web.sessions.sign_out(ctx.store, request.cookies.get(COOKIE))
    response = back_to("/signin")
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return response
