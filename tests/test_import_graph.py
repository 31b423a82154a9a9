"""No import cycle anywhere in specviz, deferred (function-level) imports included, and the real-model layer below none.

The graph is read from the source (every `import` / `from ... import`, at any depth), with
relative imports resolved: `from .. import figures` is an edge to `specviz.figures`, and an
import from a package is an edge to its `__init__`. A cycle makes the import order matter
(the live view's `results` <-> `live_render` loop was one, hidden by a deferred import).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "specviz"


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = ["specviz", *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the specviz modules it imports anywhere in its source."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.split(".")[0] == "specviz"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "specviz":
                    continue
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
                deps |= set(subs) if subs and len(subs) == len(node.names) else {target}
        graph[name] = {d for d in deps if d in files and d != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state and (found := visit(dep)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_really_read():
    graph = import_graph()
    assert "specviz.lm.results" in graph["specviz.lm.engine"]
    assert "specviz.lm.payoff" in graph["specviz.figures.payoff"]
    assert "specviz.figures" in graph["specviz.widgets.live_view"]  # `from .. import figures as LF`
    assert "specviz.lm.vllm" in graph["specviz.cli"]  # a deferred import counts


def test_no_import_cycle_deferred_imports_included():
    assert find_cycle(import_graph()) is None, " -> ".join(find_cycle(import_graph()))


def test_a_planted_cycle_is_found(tmp_path):
    pkg = tmp_path / "specviz"
    (pkg / "lm").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "lm" / "__init__.py").write_text("")
    (pkg / "lm" / "results.py").write_text("def html():\n    from .render import fates_html  # deferred\n")
    (pkg / "lm" / "render.py").write_text("from .results import html\n")
    graph = import_graph(pkg)
    assert find_cycle(graph) == ["specviz.lm.render", "specviz.lm.results", "specviz.lm.render"]
    (pkg / "lm" / "results.py").write_text("")
    assert find_cycle(import_graph(pkg)) is None


@pytest.mark.parametrize("upper", ["specviz.figures", "specviz.widgets", "specviz.display", "specviz.cli"])
def test_the_real_model_runtime_imports_no_view(upper):
    """specviz.lm sits above the figures and widgets: none of its modules imports them (deferred or not)."""
    graph = import_graph()
    bad = sorted(m for m, deps in graph.items() if m.startswith("specviz.lm") for d in deps if d.startswith(upper))
    assert not bad, f"{bad} import {upper}"
