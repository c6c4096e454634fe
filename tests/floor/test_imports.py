"""The package's import graph: no cycle, and the floors of docs/design.md ("Layout") hold, checked from the source with `ast`.

The shared floor (`corpus`, `splits`, `seal`, `spans`, `identity`) imports neither environment nor
anything above them; the two environments (`redact`, `audit`) import each other's modules never;
only the verifiers adapters import verifiers.

Every `import` counts, at module level or inside a function (a lazy import is still an
arrow). A module's import of its own parent package is not an arrow: Python imports a
package before any of its modules anyway. Run this file as a script to print the graph.
"""

from __future__ import annotations

import ast
import sys
import unittest
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "redaction_pressure"


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


def imports_verifiers(path: Path) -> bool:
    """Whether a module imports verifiers anywhere (at module level or inside a function)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "verifiers" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "verifiers":
            return True
    return False


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
        self.assertNotIn("redaction_pressure.redact.api", graph["redaction_pressure.redact.pool"])
        self.assertNotIn("redaction_pressure.redact.api", graph["redaction_pressure.redact.worker"])


FLOOR = ("corpus", "splits", "seal", "spans", "identity")
"""The shared floor, below both environments."""
WINGS = ("redact", "audit")
"""The two environments: redaction-pressure (one turn) and secrets-audit (multi-turn)."""
ABOVE = ("report", "cli", "trl")
"""What stands on the environments: the report, the command line (with evaluate, endpoint, serving) and
`trl` (redaction-pressure's reward function for TRL's GRPOTrainer, over the redact wing's API)."""
ADAPTERS = {
    "redaction_pressure.redact.taskset",
    "redaction_pressure.redact.harness",
    "redaction_pressure.audit.taskset",
    "redaction_pressure.audit.tools",
    "redaction_pressure.cli.serving",
    "redaction_pressure.cli.play",
}
"""The modules that import verifiers: the two tasksets, the one-turn harness, what serves the audit
tools in the agent's box (`audit.tools`: verifiers' own MCP proxy over a stub; the tools' work is
`audit.toolcalls`, framework-free), the env server, and `play` (which runs verifiers' own bash and
edit tools)."""


def part(module: str) -> str:
    """A module's part of the house: the package's first-level name under `redaction_pressure`."""
    return module.split(".")[1] if "." in module else ""


def crossings(graph: dict[str, set[str]]) -> dict[str, list[str]]:
    """Module -> the imports that break a floor: a floor module importing anything above the
    floor, or an environment importing anything but the floor and itself."""
    found: dict[str, list[str]] = {}
    for module, targets in graph.items():
        if part(module) in FLOOR:
            allowed = {*FLOOR, ""}
        elif part(module) in WINGS:
            allowed = {*FLOOR, part(module), ""}
        else:
            continue
        wrong = sorted(t for t in targets if part(t) not in allowed)
        if wrong:
            found[module] = wrong
    return found


class TestFloors(unittest.TestCase):
    def test_every_module_belongs_to_a_known_part(self):
        """A new top-level module is placed on purpose (floor, wing or above), not by accident."""
        known = {*FLOOR, *WINGS, *ABOVE, "", "__main__"}
        self.assertEqual(sorted({part(m) for m in import_graph()} - known), [])

    def test_the_floors_hold(self):
        """The shared floor imports no environment, the report or the CLI; redact never imports
        audit (nor audit redact), and neither imports the report or the CLI."""
        self.assertEqual(crossings(import_graph()), {})

    def test_only_the_adapters_import_verifiers(self):
        """Every other module is testable without the framework."""
        found = {_module_name(path) for path in PACKAGE.rglob("*.py") if imports_verifiers(path)}
        self.assertEqual(sorted(found - ADAPTERS), [])
        self.assertEqual(sorted(ADAPTERS - found), [], "an adapter that no longer imports verifiers: drop it")

    def test_only_the_openenv_adapters_import_openenv_and_only_the_server_imports_them(self):
        """openenv cannot share an environment with verifiers: one adapter per wing, the server and the agent
        import it, and only `serve-openenv` and `agent` import the adapters (lazily), so every other command runs
        without openenv."""
        importing = set()
        for path in PACKAGE.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                if any(n.split(".")[0] == "openenv" for n in names):
                    importing.add(_module_name(path))
        adapters = {"redaction_pressure.audit.openenv_env", "redaction_pressure.redact.openenv_env"}
        self.assertEqual(importing, {*adapters, "redaction_pressure.cli.serve_openenv", "redaction_pressure.cli.agent"})
        graph = import_graph()
        users = sorted(m for m, targets in graph.items() if targets & adapters)
        self.assertEqual(users, ["redaction_pressure.cli.agent", "redaction_pressure.cli.serve_openenv"])

    def test_the_floor_check_finds_each_kind_of_crossing(self):
        """The check can fail: a floor module importing a wing, one wing importing the other, and a
        wing importing the CLI are each reported; a wing importing the floor is not."""
        graph = {
            "redaction_pressure.splits": {"redaction_pressure.redact.rules"},
            "redaction_pressure.audit.grading": {"redaction_pressure.redact.scanner", "redaction_pressure.spans"},
            "redaction_pressure.redact.pool": {"redaction_pressure.cli.serving", "redaction_pressure.redact.worker"},
            "redaction_pressure.report.runs": {"redaction_pressure.audit.rubric", "redaction_pressure.redact.api"},
        }
        self.assertEqual(
            crossings(graph),
            {
                "redaction_pressure.splits": ["redaction_pressure.redact.rules"],
                "redaction_pressure.audit.grading": ["redaction_pressure.redact.scanner"],
                "redaction_pressure.redact.pool": ["redaction_pressure.cli.serving"],
            },
        )


if __name__ == "__main__":
    graph = import_graph()
    for module in sorted(graph):
        print(f"{module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
    print(f"cycles: {cycles(graph) or 'none'}")
