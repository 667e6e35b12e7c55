"""The page's parts on the app: its routes, static files, error pages and the pulse that keeps
its live parts current."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from parley.api.included import included
from parley.context import Context
from parley.web import a2a, chat, directory, editing, links, roots, runs, signin, team, work
from parley.web.errors import install_page_errors
from parley.web.headers import SecurityHeaders
from parley.web.live import Pulse
from parley.web.render import Pages
from parley.web.routing import Web
from parley.web.session import Sessions, load_or_create_web_secret

STATIC = Path(__file__).parent / "static"


def install_web(app: FastAPI) -> None:
    """After the API's error handlers, which the page's wrap."""
    install_page_errors(app)
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, the guards' own too
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    pages = (signin, chat, work, roots, runs, team, editing, directory, links, a2a)
    app.router.routes.extend(included(tuple(module.router for module in pages)))


def start_web(app: FastAPI, context: Context) -> Callable[[], None]:
    """The page's parts for a running context; returns what ends them."""
    settings = context.settings
    secret = load_or_create_web_secret(settings.data_dir)
    pulse = Pulse()
    sessions = Sessions(secret, int(settings.web_session_hours * 3600), context.clock)
    app.state.web = Web(sessions, Pages(context.clock), pulse)
    return context.store.subscribe(pulse.on_commit)
