"""Every route's endpoint and dependencies are coroutines. FastAPI runs a plain ``def`` one on a
worker thread, and under load that thread waits for the event loop to let go of the GIL (up
to its 5 ms switch interval) on every request: the federation bench's receiver at 128 lanes
went from ~4,500 to ~7,500 messages/s when its two sync dependencies became async."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fastapi.dependencies.models import Dependant

from parley.app import create_app
from parley.settings import Settings


def _on_the_loop(call: Callable[..., Any]) -> bool:
    """Run by FastAPI on the event loop: a coroutine (or async generator) function, or an
    object whose ``__call__`` is one."""
    for candidate in (call, getattr(call, "__call__", None)):  # noqa: B004
        if inspect.iscoroutinefunction(candidate) or inspect.isasyncgenfunction(candidate):
            return True
    return False


def _dependants(dependant: Dependant) -> Iterator[Dependant]:
    yield dependant
    for inner in dependant.dependencies:
        yield from _dependants(inner)


def _routes(app: Any) -> Iterator[Any]:
    for route in app.router.routes:
        contexts = getattr(route, "effective_route_contexts", None)
        if contexts is not None:
            yield from contexts()
        elif getattr(route, "dependant", None) is not None:
            yield route


def _sync_callables(app: Any) -> set[str]:
    found = set()
    for route in _routes(app):
        for dependant in _dependants(route.dependant):
            call = dependant.call
            if call is not None and not _on_the_loop(call):
                found.add(f"{route.path}: {getattr(call, '__qualname__', call)}")
    return found


def test_every_route_and_dependency_is_a_coroutine(tmp_path: Path) -> None:
    app = create_app(Settings(data_dir=tmp_path))
    assert sum(1 for _ in _routes(app)) > 50  # the walk reaches the included routers' routes
    assert _sync_callables(app) == set()


def test_the_rule_sees_a_sync_dependency(tmp_path: Path) -> None:
    from fastapi import Depends

    def plain() -> None:
        return None

    app = create_app(Settings(data_dir=tmp_path))

    @app.get("/plain", dependencies=[Depends(plain)])
    async def route() -> None:
        return None

    assert _sync_callables(app) == {"/plain: test_the_rule_sees_a_sync_dependency.<locals>.plain"}
