"""The harness, the parallel controller and the pytest plugin import one another in one
direction only (plugin -> harness/parallel -> suite): a circle made each module's import
order matter and hid which one owns the session's implementation."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dsh_conformance"
MODULES = ("harness", "parallel", "pytest_plugin", "suite")


def imported(module: str) -> set[str]:
    """Every ``dsh_conformance.<name>`` a module imports, at top level or inside a function."""
    tree = ast.parse((SRC / f"{module}.py").read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "dsh_conformance":
                names.update(alias.name for alias in node.names)
            elif node.module.startswith("dsh_conformance."):
                names.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("dsh_conformance."):
                    names.add(alias.name.split(".")[1])
    return names & set(MODULES)


def test_no_import_circle_between_harness_parallel_and_plugin() -> None:
    graph = {m: imported(m) for m in MODULES}
    # Depth-first search for a back edge.
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                pytest.fail("import circle: " + " -> ".join([*path, node, nxt]))
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for module in MODULES:
        if module not in state:
            visit(module, [])
    assert graph["suite"] == set(), "suite is the leaf the others share"


@pytest.mark.parametrize("module", [*MODULES, "cli"])
def test_each_module_imports_alone(module: str) -> None:
    code = f"import dsh_conformance.{module}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
