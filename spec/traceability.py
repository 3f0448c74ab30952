"""Which tests cite each requirement, read statically from the suite's source.

The catalog page and the examples pages list the tests of every requirement; reading
``@pytest.mark.req(...)`` from the AST (and the ``req`` of every case file, which
``test_cases.py`` and ``test_inbox_regressions.py`` turn into parametrized marks) keeps
page generation fast and free of a pytest collection.  tests/test_examples.py checks the
result against a real collection, so the static reading cannot drift.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from functools import cache
from importlib import resources

#: parametrized tests whose requirement marks come from case files, by case-file format
#: Requirements every case of a format's test cites beside the case's own (D-163).
CASE_EXTRA: dict[str, tuple[str, ...]] = {"dsh-cases/1": ("REF-010",)}
CASE_TESTS = {
    "dsh-cases/1": "conformance/test_cases.py::test_case",
    "dsh-agent-program/1": "conformance/test_inbox_regressions.py::test_program",
}


def _req_marks(node: ast.expr, module: str = "") -> list[str]:
    """Requirement ids of every ``pytest.mark.req("ID", ...)`` call inside *node*.

    ``*NAME`` arguments (a shared tuple of ids, such as the inbox machine's ``BLAMES``)
    are read from the test module's namespace.
    """
    found: list[str] = []
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "req"
        ):
            for a in call.args:
                if isinstance(a, ast.Constant):
                    found.append(str(a.value))
                elif isinstance(a, ast.Starred) and isinstance(a.value, ast.Name) and module:
                    found += [str(i) for i in _shared(module, a.value.id)]
    return found


def _shared(module: str, name: str) -> tuple[str, ...]:
    import importlib

    loaded = importlib.import_module(f"dsh_conformance.conformance.{module}")
    return tuple(getattr(loaded, name))


def _module_tests(name: str, source: str) -> dict[str, list[str]]:
    tree = ast.parse(source)
    module_reqs: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            module_reqs += _req_marks(node.value, name.removesuffix(".py"))
    tests: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            reqs = [r for d in node.decorator_list for r in _req_marks(d, name.removesuffix(".py"))]
            tests[f"conformance/{name}::{node.name}"] = list(dict.fromkeys(module_reqs + reqs))
    return tests


@cache
def cited_tests() -> dict[str, tuple[str, ...]]:
    """Requirement id -> test ids (``conformance/<file>::<test>[<case>]``), sorted."""
    root = resources.files("dsh_conformance.conformance")
    by_req: dict[str, set[str]] = defaultdict(set)
    for entry in root.iterdir():
        if entry.name.startswith("test_") and entry.name.endswith(".py"):
            for test, reqs in _module_tests(entry.name, entry.read_text("utf-8")).items():
                for req in reqs:
                    by_req[req].add(test)
    for entry in (root / "cases").iterdir():
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text("utf-8"))
        case_test = CASE_TESTS.get(str(data.get("format")))
        if case_test is None:
            continue
        stem = entry.name.removesuffix(".json")
        extra: tuple[str, ...] = CASE_EXTRA.get(str(data.get("format")), ())
        if data.get("format") == "dsh-agent-program/1":
            extra = _shared("inbox_machine", "BLAMES")
        for case in data["cases"]:
            for req in (*extra, *case["req"]):
                by_req[req].add(f"{case_test}[{stem}:{case['id']}]")
    return {req: tuple(sorted(tests)) for req, tests in by_req.items()}
