"""Blame discipline of converted conformance modules, checked statically (issue 10 item 2).

In a test citing more than one requirement, every ``assert`` sits inside a
``with check(...)`` block, so its failure blames exactly one id (the expect* helpers
raise already-blamed failures).  Tests that use the ``oracle`` are differential: marked
``@pytest.mark.differential`` and citing REF-* ids only.  Enforced for the modules in
CONVERTED; extend the tuple as areas are converted.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
CONVERTED = tuple(sorted(p.name for p in CONFORMANCE.glob("test_*.py")))


def _mark(decorator: ast.expr, name: str) -> ast.expr | None:
    """The decorator if it is ``pytest.mark.<name>`` or ``pytest.mark.<name>(...)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if (
        isinstance(target, ast.Attribute)
        and target.attr == name
        and isinstance(target.value, ast.Attribute)
        and target.value.attr == "mark"
    ):
        return decorator
    return None


def cited(func: ast.FunctionDef) -> list[str]:
    for decorator in func.decorator_list:
        mark = _mark(decorator, "req")
        if isinstance(mark, ast.Call):
            return [a.value for a in mark.args if isinstance(a, ast.Constant)]
    return []


def is_check(item: ast.withitem) -> bool:
    call = item.context_expr
    return (
        isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "check"
    )


def bare_asserts(node: ast.AST) -> Iterator[ast.Assert]:
    """Asserts under *node* that no ``with check(...)`` block encloses."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.With) and any(is_check(i) for i in child.items):
            continue
        if isinstance(child, ast.Assert) and not _narrows(child):
            yield child
        yield from bare_asserts(child)


def _narrows(node: ast.Assert) -> bool:
    """``assert x is not None`` right after an ``expect`` only narrows a type for mypy; an
    assert whose message starts ``setup:`` checks that the test reached its starting state
    (a failure there blames every cited id: the test could judge none of them)."""
    if isinstance(node.msg, ast.Constant) and str(node.msg.value).startswith("setup:"):
        return True
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


def _test_functions(module: str) -> list[ast.FunctionDef]:
    tree = ast.parse((CONFORMANCE / module).read_text(encoding="utf-8"))
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


@pytest.mark.parametrize("module", CONVERTED)
def test_multi_requirement_tests_blame_one_id_per_assertion(module: str) -> None:
    offenders = [
        f"{module}:{a.lineno} in {f.name} (cites {', '.join(cited(f))})"
        for f in _test_functions(module)
        if len(cited(f)) > 1
        for a in bare_asserts(f)
    ]
    assert not offenders, "assert outside check(...) in a multi-requirement test:\n" + "\n".join(
        offenders
    )


@pytest.mark.parametrize("module", CONVERTED)
def test_oracle_comparisons_are_differential_and_blame_ref_ids(module: str) -> None:
    for func in _test_functions(module):
        if "oracle" not in {a.arg for a in func.args.args}:
            continue
        ids = _resolved(module, func.name)
        assert any(r.startswith("REF-") for r in ids), (func.name, ids)
        if all(r.startswith("REF-") for r in ids):
            # a pure comparison: skipped as a self-comparison for the reference (D-162)
            assert any(_mark(d, "differential") for d in func.decorator_list), func.name
        # else: a lockstep machine that also checks seed invariants; its comparison blames
        # only REF ids (each invariant its own check), and it keeps running on the reference


def _resolved(module: str, name: str) -> list[str]:
    """The ids *name* cites, shared tuples (``*BLAMES``) resolved as collection sees them."""
    from dsh_conformance.spec.traceability import _module_tests, cited_tests

    source = (CONFORMANCE / module).read_text(encoding="utf-8")
    test = f"conformance/{module}::{name}"
    ids = list(_module_tests(module, source)[test])
    for req, tests in cited_tests().items():  # ids that case-file parameters add
        if req not in ids and any(t.startswith(test + "[") for t in tests):
            ids.append(req)
    return ids


def test_the_checker_finds_a_bare_assert() -> None:
    """A positive control: the walk sees an assert outside check and none inside it."""
    source = (
        "@pytest.mark.req('A-001', 'B-001')\n"
        "def test_x(impl):\n"
        "    with check('A-001'):\n"
        "        assert 1\n"
        "    if True:\n"
        "        assert 2\n"
    )
    (func,) = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    assert cited(func) == ["A-001", "B-001"]
    assert [a.lineno for a in bare_asserts(func)] == [6]
