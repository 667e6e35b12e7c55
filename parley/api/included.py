"""Routers included once per process, their routes shared by every app made in it. FastAPI
reads an included router's endpoints (each parameter made a pydantic field) at the first
request of each app that includes it, some 30 ms a router: once for a server, but again at
each test's hub, for each router a request passed on its way. Every app is made alike (the
same dependencies), so what it read holds for each; nothing of an app is kept in the routes
(Parley sets no dependency overrides)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, FastAPI
from starlette.routing import BaseRoute

from parley.api.deps import refuse_nul_in_url

# What every app is made with (app.py): the included routes take it in.
APP_DEPENDENCIES = [Depends(refuse_nul_in_url)]


# By the routers' identities (module-level routers, never collected) and the prefix.
_MADE: dict[tuple[object, ...], tuple[BaseRoute, ...]] = {}


def included(routers: tuple[APIRouter, ...], prefix: str = "") -> tuple[BaseRoute, ...]:
    """The routes of ``routers`` under ``prefix``, as an app made alike includes them."""
    key = (prefix, *(id(router) for router in routers))
    made = _MADE.get(key)
    if made is None:
        holder = FastAPI(dependencies=APP_DEPENDENCIES)
        before = len(holder.router.routes)
        for router in routers:
            holder.include_router(router, prefix=prefix)
        made = _MADE[key] = tuple(holder.router.routes[before:])
    return made
