"""What the edges hand to the library: settings and the running parts, built once at start."""

from __future__ import annotations

from dataclasses import dataclass

from parley.broker.port import Broker
from parley.clock import Clock
from parley.hub.runtime import Runtime
from parley.mesh.registry import MeshRegistry
from parley.settings import Settings
from parley.store import Store


@dataclass(frozen=True)
class Context:
    settings: Settings
    store: Store
    broker: Broker
    clock: Clock
    runtime: Runtime
    registry: MeshRegistry  # the nodes of the mesh, as the hub holds them
