"""The layers of the harness import downwards only (docs/architecture.md).

CLI -> options/plan/runner -> (pytest) -> plugin -> harness rooms -> record: a circle
made each module's import order matter and hid which one owns the session's
implementation; a room importing another room would make two concepts change together.
Imports under ``if TYPE_CHECKING:`` are not imports at run time and are not counted.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "dsh_conformance"
#: The modules of the harness's layers (a package stands for all its modules).
LAYERS = (
    "cli",
    "options",
    "profiles",
    "runplan",
    "runner",
    "pytest_plugin",
    "parallel",
    "suite",
    "harness",
    "record",
)
#: The rooms of the harness package: each imports no other (the plugin composes them).
ROOMS = ("selection", "classify", "evidence", "blame", "expected", "recording")


def _files(module: str) -> list[Path]:
    folder = SRC / module.replace(".", "/")
    if folder.is_dir():
        return sorted(folder.glob("*.py"))
    return [folder.with_suffix(".py")]


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    kept: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            todo.extend(node.orelse)
            continue
        kept.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return kept


@cache
def names(module: str) -> frozenset[str]:
    """Every ``dsh_conformance.<dotted name>`` *module* imports at run time, at top level
    or inside a function (``from a import b`` counts both ``a`` and ``a.b``)."""
    found: set[str] = set()
    for path in _files(module):
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module == "dsh_conformance":
                    found.update(alias.name for alias in node.names)
                elif node.module.startswith("dsh_conformance."):
                    base = node.module.split(".", 1)[1]
                    found.add(base)
                    found.update(f"{base}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(
                    a.name.split(".", 1)[1]
                    for a in node.names
                    if a.name.startswith("dsh_conformance.")
                )
    return frozenset(found)


def imported(module: str) -> frozenset[str]:
    """The top-level modules and packages of ``dsh_conformance`` *module* imports."""
    return frozenset(name.split(".")[0] for name in names(module))


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path, node, nxt]
            if nxt not in state:
                found = visit(nxt, [*path, node])
                if found:
                    return found
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [])
            if found:
                return found
    return None


def test_no_import_circle_between_the_layers() -> None:
    graph = {m: set(imported(m)) & set(LAYERS) - {m} for m in LAYERS}
    circle = _circle(graph)
    assert circle is None, "import circle: " + " -> ".join(circle or [])
    assert graph["suite"] <= {"options"}, "suite is the leaf the plugin, harness and parallel share"
    assert "record" not in graph["options"] | graph["profiles"]


def test_the_runner_reaches_pytest_without_importing_the_plugin_or_the_harness() -> None:
    """The CLI's way down stops at pytest.main: the plugin is pytest's to load."""
    for module in ("runner", "runplan", "options", "profiles"):
        assert not imported(module) & {"pytest_plugin", "harness"}, module


def test_each_room_of_the_harness_imports_no_other_room() -> None:
    for room in ROOMS:
        others = {f"harness.{r}" for r in ROOMS} - {f"harness.{room}"}
        assert not names(f"harness.{room}") & others, room
        assert "harness.plugin" not in names(f"harness.{room}"), room


def test_no_module_of_the_layers_is_over_400_lines() -> None:
    sizes = {
        str(path.relative_to(SRC)): len(path.read_text(encoding="utf-8").splitlines())
        for module in LAYERS
        for path in _files(module)
    }
    assert {name: n for name, n in sizes.items() if n > 400} == {}


@pytest.mark.parametrize(
    "module", ["harness.plugin", "parallel", "pytest_plugin", "suite", "record", "cli"]
)
def test_each_module_imports_alone(module: str) -> None:
    code = f"import dsh_conformance.{module}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_docs_architecture_names_only_modules_that_exist_and_every_room() -> None:
    """docs/architecture.md matches the code: every module it names exists, and every
    module of the harness package and the record package is named."""
    import re

    root = SRC.parents[1]
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z_/]+(?:\.py|/))`", text))
    assert len(named) > 30
    homes = [SRC, root]
    missing = [n for n in named if not any((home / n).exists() for home in homes)]
    assert missing == []
    for package in ("harness", "record"):
        for path in (SRC / package).glob("*.py"):
            if path.name != "__init__.py":
                assert f"{package}/{path.name}" in text, path
