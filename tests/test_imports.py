"""The package's import graph has no cycle: arrows point one way (STYLE.md), checked from the source with `ast`.

Every `import` counts, at module level or inside a function (a lazy import is still an
arrow). A module's import of its own parent package is not an arrow: Python imports a
package before any of its modules anyway. Run this file as a script to print the graph.
"""

from __future__ import annotations

import ast
import sys
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "redaction_pressure"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (directly)."""
    modules = {_module_name(path): path for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        home = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = home.split(".")[: len(home.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            else:
                continue
            for name in names:
                while name and name not in modules:
                    name = name.rpartition(".")[0]
                if name and name != module and not module.startswith(name + "."):
                    targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


class TestImportGraph(unittest.TestCase):
    def test_no_module_of_the_package_imports_itself_through_others(self):
        """No cycle among redaction_pressure modules, lazy imports included."""
        self.assertEqual(cycles(import_graph()), [])

    def test_the_check_finds_a_cycle(self):
        """A two-module circle is reported (the check can fail)."""
        self.assertEqual(cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}), [["a", "b"]])

    def test_scan_workers_do_not_import_the_api(self):
        """pool and worker score through `scoring`, below the API, never through `api`."""
        graph = import_graph()
        self.assertNotIn("redaction_pressure.api", graph["redaction_pressure.pool"])
        self.assertNotIn("redaction_pressure.api", graph["redaction_pressure.worker"])


if __name__ == "__main__":
    graph = import_graph()
    for module in sorted(graph):
        print(f"{module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
    print(f"cycles: {cycles(graph) or 'none'}")
