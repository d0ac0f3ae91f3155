"""The modules of python/hedge import each other without a circle (issue 17).

The graph is read from the source with ast: an edge for every ``import hedge...`` and ``from
... import`` (relative ones resolved) anywhere in a module, at its top or inside a function; a
name imported from a package is an edge to its module when it is one, else to the package's
``__init__``. ``if TYPE_CHECKING:`` imports count too: a circle of types is a circle.

Between packages (hedge.sim, hedge.report, ...) there is no circle either, with each command
line (``hedge.cli``, ``hedge.<package>.cli``) a layer of its own above every library: a command
may use any package (``hedge simulate`` renders hedge.report's tables), a library never a
command.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "python"


def modules() -> dict[str, Path]:
    """Module name -> file, for every .py under python/hedge."""
    out = {}
    for path in sorted((ROOT / "hedge").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported(name: str, node: ast.AST, known: dict[str, Path]) -> list[str]:
    """The hedge modules one import statement in module ``name`` names."""
    package = name if known[name].name == "__init__.py" else name.rpartition(".")[0]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "hedge"]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != "hedge":
        return []
    out = []
    for alias in node.names:
        child = f"{target}.{alias.name}"
        out.append(child if child in known else target)
    return out


@functools.cache
def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[name].update(t for t in _imported(name, node, known)
                                   if t in known and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of the graph as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    for root in sorted(graph):
        if state.get(root):
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph[nxt])))
    return None


def test_the_graph_is_read():
    graph = import_graph()
    assert "hedge.sim.engine" in graph and "hedge.model" in graph["hedge.sim.engine"]


def test_the_cycle_finder_names_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def _layer(module: str) -> str:
    """A command line is its own layer; any other module counts as its package."""
    return module if module.endswith(".cli") else ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = out.setdefault(_layer(module), set())
        edges.update(_layer(t) for t in targets if _layer(t) != _layer(module))
    return out


def test_no_library_imports_a_command_line():
    wrong = [(m, t) for m, targets in import_graph().items() if not m.endswith(".cli")
             for t in targets if t.endswith(".cli")]
    assert wrong == []


def test_hedge_packages_form_no_circle():
    cycle = find_cycle(package_graph(import_graph()))
    assert cycle is None, "package circle: " + " -> ".join(cycle)


def test_hedge_imports_form_no_circle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)
