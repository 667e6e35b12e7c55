"""Errors on a page's request become a page, with the API's status for the same error (the
one mapping, ``api/errors.status_of``): what a person may not read is the same 404 as what
does not exist. A page asked for without a sign-in goes to the sign-in page."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import RedirectResponse, Response
from starlette.exceptions import HTTPException

from parley.api.errors import describe_validation, status_of
from parley.errors import Conflict, Invalid, NotFound, ParleyError, Unavailable
from parley.web.failed import FailedForm
from parley.web.forms import Form
from parley.web.render import back_to
from parley.web.routing import SignInFirst, same_origin_path, sign_in_path, web_of

TITLES = {400: "Not understood", 401: "Sign in first", 403: "Not allowed", 404: "Not found",
          409: "Not now", 413: "Too large", 429: "Too many tries",
          503: "Not available"}  # fmt: skip


def is_page(request: Request) -> bool:
    if getattr(request.state, "page", False):
        return True
    path = request.url.path
    api = path.startswith(("/api/", "/federation/", "/docs", "/openapi", "/healthz"))
    return not api and "text/html" in request.headers.get("accept", "")


def error_page(request: Request, status: int, message: str) -> Response:
    web = web_of(request)
    viewer = getattr(request.state, "viewer", None)
    back = request.headers.get("referer") or "/"
    title = TITLES.get(status, "Something went wrong")
    return web.pages.page(
        request, "error.html", viewer, status=status, title=title, message=message, back=back
    )


def back_to_the_form(request: Request, exc: Exception) -> Response | None:
    """A form the library refused as a mistake (invalid, naming nothing, not now, or a part
    down) goes back to the page it was filled in on, kept: what was typed put back, the message
    beside its field. None when there is no such page to go back to (a script's post names
    none): the error page then."""
    form = getattr(request.state, "form", None)
    viewer = getattr(request.state, "viewer", None)
    if not isinstance(exc, ParleyError) or not isinstance(form, Form) or viewer is None:
        return None
    if not _a_mistake(exc, form):
        return None
    page = same_origin_path(request, request.headers.get("referer"))
    if page is None:
        return None
    field = exc.fields.get("field")
    failed = FailedForm(request.url.path, exc.message, field if isinstance(field, str) else None,
                        form.fields)  # fmt: skip
    web_of(request).pages.failed.keep(viewer.form_token, failed)
    return back_to(page)


def _a_mistake(exc: ParleyError, form: Form) -> bool:
    """What the form's sender can put right or try again: not a refusal of who they are (those
    keep a page of their own), nor a route's address that names nothing."""
    if isinstance(exc, NotFound):  # a field of the form naming nothing; a route's stays a 404
        return exc.fields.get("field") in form.fields
    return isinstance(exc, Invalid | Conflict | Unavailable)


def install_page_errors(app: FastAPI) -> None:
    """Wrap the API's handlers: a page's request gets a page, any other the API's answer."""
    handlers = app.exception_handlers

    def for_pages(kind: type[Exception], message: Callable[[Exception], tuple[int, str]]) -> None:
        api = handlers[kind]

        async def handle(request: Request, exc: Exception) -> Response:
            if not is_page(request):
                answered = api(request, exc)
                return await answered if inspect.isawaitable(answered) else answered
            return back_to_the_form(request, exc) or error_page(request, *message(exc))

        app.add_exception_handler(kind, handle)

    def parley(exc: Exception) -> tuple[int, str]:
        assert isinstance(exc, ParleyError)
        return status_of(exc), exc.message

    def validation(exc: Exception) -> tuple[int, str]:
        assert isinstance(exc, RequestValidationError)
        return 400, Invalid(describe_validation(exc)).message

    def http(exc: Exception) -> tuple[int, str]:
        assert isinstance(exc, HTTPException)
        return exc.status_code, str(exc.detail)

    for_pages(ParleyError, parley)
    for_pages(RequestValidationError, validation)
    for_pages(HTTPException, http)

    async def sign_in_first(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInFirst)
        target = sign_in_path(exc.then if request.method == "GET" else "/")
        if request.headers.get("hx-request"):  # htmx follows this header, not a 303
            return Response(status_code=204, headers={"HX-Redirect": target})
        return RedirectResponse(target, status_code=303)

    app.add_exception_handler(SignInFirst, sign_in_first)
