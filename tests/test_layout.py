"""The package graph reads top-down: no package imports one that imports it back. A concept's
``model`` module holds plain values and may be read from anywhere (the store reads them all)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import parley
from parley.channels.kinds import KINDS

ROOT = Path(parley.__file__).parent


def _layer(module: str) -> str:
    """``parley.runs.stop`` → ``runs``; ``parley.runs.model`` → ``runs.model``."""
    parts = module.split(".")[1:]
    if len(parts) >= 2 and parts[1] == "model":
        return f"{parts[0]}.model"
    return parts[0] if parts else ""


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("parley.")}


def package_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT.parent).with_suffix("")
        module = ".".join(part for part in relative.parts if part != "__init__")
        source = _layer(module)
        for target in map(_layer, _imports(path)):
            if target and target != source:
                graph[source].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_package_graph_has_no_cycle() -> None:
    assert _cycle(package_graph()) is None, " → ".join(_cycle(package_graph()) or [])


def test_the_store_reads_only_values_of_other_concepts() -> None:
    allowed = {"errors", "clock", "worker"}  # worker: the one loop shape (its checkpointer)
    for target in package_graph()["store"]:
        assert target.endswith(".model") or target in allowed, f"store imports {target}"


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _third_party_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
    return found


def test_only_the_nats_modules_know_nats() -> None:
    knowing = {
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if "nats" in _third_party_imports(path)
    }
    assert knowing == {"broker/nats_broker.py", "broker/nats_durable.py"}


@pytest.mark.parametrize("channel", sorted(KINDS))
def test_each_chat_service_s_library_is_imported_by_its_own_package_only(channel: str) -> None:
    """An optional extra: imported elsewhere, Parley would not start without it."""
    kind = KINDS[channel]
    knowing = {
        path.relative_to(ROOT).parts[:2]
        for path in ROOT.rglob("*.py")
        if kind.library in _third_party_imports(path)
    }
    assert knowing == {("channels", kind.name)}


# What a node runs on its own machine (a node joins with credentials and a broker address only:
# no store there), and the broker transport both sides share.
STORELESS = ("parley.node", "parley.broker")


def module_graph() -> dict[str, set[str]]:
    """Each module of parley and the parley modules it imports (``from a import b`` counts ``a``
    and, when it is a module, ``a.b``)."""
    modules = {}
    for path in ROOT.rglob("*.py"):
        relative = path.relative_to(ROOT.parent).with_suffix("")
        modules[".".join(part for part in relative.parts if part != "__init__")] = path
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
        graph[module] = {name for name in found if name in modules}
    return graph


def reached_from(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, frontier = set(), [start]
    while frontier:
        for target in graph.get(frontier.pop(), ()):
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return seen


def test_the_node_runtime_never_reaches_the_store() -> None:
    graph = module_graph()
    storeless = [m for m in graph if m.startswith(STORELESS)]
    assert "parley.node.runner" in storeless and "parley.broker.nats_broker" in storeless
    for module in storeless:
        reached = sorted(m for m in reached_from(graph, module) if m.startswith("parley.store"))
        assert not reached, f"{module} reaches {reached}"


def test_a_store_import_is_found_however_deep() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"parley.store.x"}, "parley.store.x": set()}
    assert "parley.store.x" in reached_from(graph, "a")


ARCHITECTURE = ROOT.parent / "docs" / "architecture.md"


def documented_layers() -> dict[str, int]:
    """Each package's layer, as the table under "## Layers" in docs/architecture.md says."""
    text = ARCHITECTURE.read_text().split("## Layers", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            for name in cells[1].split(","):
                layers[name.strip().strip("`")] = int(cells[0])
    return layers


def top_level_names() -> set[str]:
    names = {path.stem for path in ROOT.glob("*.py") if path.stem != "__init__"}
    return names | {path.parent.name for path in ROOT.glob("*/__init__.py")}


def test_every_package_is_on_a_documented_layer() -> None:
    graph = package_graph()
    present = top_level_names() | set(graph) | {t for ts in graph.values() for t in ts}
    layers = documented_layers()
    assert sorted(present - set(layers)) == [], "packages missing from the table"
    assert sorted(set(layers) - present) == [], "the table names packages that are gone"


def test_each_package_imports_only_its_layer_and_those_above() -> None:
    layers = documented_layers()
    breaking = [
        f"{source} (layer {layers[source]}) imports {target} (layer {layers[target]})"
        for source, targets in package_graph().items()
        for target in targets
        if layers[target] > layers[source]
    ]
    assert breaking == []
