"""The reporting package in layers (issue 44): one verdict model below every renderer,
no import circle, small modules.

rows/reviews → problems → verdict, gate → exitstatus, ranking → judgement → renderers.
A circle (summary.py and gate.py imported each other) made each module's import order
matter and hid which one owns a concept; a renderer that computes rows or verdicts
itself can disagree with the others (D-214).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dsh_conformance"
PACKAGE = SRC / "reporting"
MODULES = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__")
RENDERERS = ("terminal", "markdown", "html", "junit", "jsonreport", "diff")
#: What only the verdict model computes: a renderer reads it from ``judge``.
MODEL_ONLY = {
    "requirement_rows",
    "requirement_status",
    "run_problems",
    "verdicts",
    "review_items",
    "gate_of",
    "run_exit_status",
    "coverage_notices",
}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> list[tuple[str, set[str]]]:
    """(reporting module, names) for every import of a sibling, at any depth."""
    found = []
    for node in ast.walk(_tree(path)):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        names = {alias.name for alias in node.names}
        if node.module == "dsh_conformance.reporting":
            found += [(name, set()) for name in names]
        elif node.module.startswith("dsh_conformance.reporting."):
            found.append((node.module.split(".")[2], names))
    return found


def test_no_import_circle_in_reporting() -> None:
    graph = {m: {target for target, _ in _imports(PACKAGE / f"{m}.py")} for m in MODULES}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                pytest.fail("import circle: " + " -> ".join([*path, node, nxt]))
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for module in MODULES:
        if module not in state:
            visit(module, [])


@pytest.mark.parametrize("module", [*RENDERERS, "badge"])
def test_renderers_read_the_one_verdict_model(module: str) -> None:
    path = SRC / "badge.py" if module == "badge" else PACKAGE / f"{module}.py"
    used = {name for _, names in _imports(path) for name in names} & MODEL_ONLY
    assert not used, f"{module} computes {sorted(used)} itself instead of reading judge()"


@pytest.mark.parametrize("path", [*sorted(PACKAGE.glob("*.py")), SRC / "badge.py"], ids=str)
def test_modules_and_classes_stay_small(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"{path.name}: {lines} lines"
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            assert size <= 300, f"{path.name}: class {node.name} has {size} lines"
