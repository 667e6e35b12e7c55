"""create_app(settings): wiring only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from starlette.routing import Route

from parley import __version__
from parley.a2a.edge import A2ARoutes, load_if_exposed
from parley.api import (
    a2a,
    actions,
    agent_conversations,
    agents,
    approvals,
    bindings,
    channels,
    connections,
    conversations,
    deliveries,
    federation,
    health,
    nodes,
    people,
    runs,
    tasks,
    topics,
)
from parley.api.docs_ui import install_docs
from parley.api.errors import install_error_handlers
from parley.api.failures import FailureLimit
from parley.api.guards import install_guards
from parley.api.included import APP_DEPENDENCIES, included
from parley.api.mcp_endpoint import PATH as MCP_PATH
from parley.api.mcp_endpoint import McpEndpoint
from parley.api.openapi import install_openapi
from parley.clock import Clock, SystemClock
from parley.context import Context
from parley.settings import Settings
from parley.startup import running
from parley.web.wiring import install_web, start_web


def create_app(
    settings: Settings, clock: Clock | None = None, context: Context | None = None
) -> FastAPI:
    """The HTTP app. Given a ``context`` already running (as ``parley serve`` does, to report
    start-up errors plainly), it serves that; otherwise it starts its own in its lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if context is not None:
            app.state.context = context
            await load_if_exposed(context, served_a2a)
            stop_web = start_web(app, context)
            async with mcp.running():
                yield
            stop_web()
            return
        async with running(settings, clock or SystemClock()) as started:
            app.state.context = started
            await load_if_exposed(started, served_a2a)
            stop_web = start_web(app, started)
            async with mcp.running():
                yield
            stop_web()
        app.state.context = None

    app = FastAPI(
        title="Parley",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,  # served from the installed package by install_docs, not from a CDN
        redoc_url=None,
        dependencies=APP_DEPENDENCIES,
        telemetry=fastapi_telemetry(settings.telemetry),
    )
    install_error_handlers(app)
    # Failed sign-ins and unknown tokens, per address: the API's guard and the page's sign-in.
    failures = FailureLimit(
        settings.auth_failure_burst,
        settings.auth_failures_per_minute,
        context.clock if context is not None else clock or SystemClock(),
    )
    app.state.failures = failures
    install_guards(app, settings.max_body_bytes, settings.federation_max_body_bytes, failures)
    install_openapi(app)
    # Routes are matched in order: a peer's batches, the busiest route, are found first.
    app.router.routes.extend(included((federation.router, health.router)))
    # Command brains' MCP server: the run's actions, under its token (api/mcp_endpoint.py).
    mcp = McpEndpoint(app.state)
    app.router.routes.append(Route(MCP_PATH, endpoint=mcp, methods=["GET", "POST", "DELETE"]))
    # A2A: each exposed agent's card and its JSON-RPC and HTTP+JSON endpoints (parley/a2a/).
    served_a2a = A2ARoutes()
    app.router.routes.append(served_a2a)
    install_docs(app)
    install_web(app)
    app.router.routes.extend(included(API_ROUTERS, prefix="/api/v1"))
    return app


# The API's routers, under /api/v1, in the order their routes are matched.
API_ROUTERS = tuple(
    module.router
    for module in (
        people,
        approvals,
        nodes,
        agents,
        conversations,
        tasks,
        runs,
        agent_conversations,
        topics,
        actions,
        deliveries,
        bindings,
        connections,
        channels,
        a2a,
    )
)


# OpenTelemetry is off unless an operator turns it on (``telemetry``). Parley sets up no exporter
# of its own; left on, FastAPI looked for a configured provider at every request and a2a-sdk
# opened a span around each step of every A2A call (startup.py turns those off): 2.7% of the
# instructions an A2A message cost the server (callgrind), for spans that went nowhere. On,
# both send to the providers the environment sets up (``opentelemetry-instrument``, or
# FastAPI's FASTAPI_OTEL_AUTO_CONFIGURE).
def fastapi_telemetry(enabled: bool) -> TelemetryConfig | None:
    """FastAPI's ``telemetry``: its own defaults, or every signal off."""
    return None if enabled else TelemetryConfig(tracing=False, metrics=False, logs=False)
