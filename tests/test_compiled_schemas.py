"""The compiled validators (spec/compiled.py, D-500) answer exactly as jsonschema does.

jsonschema-rs decides whether a result or a script is valid; jsonschema, only when it
does not say valid, gives the message.  So a value jsonschema-rs called valid that
jsonschema would not would lose an ``UnreadableResult`` or a ``DSH_SCENARIO_INVALID``:
these tests hold the two to the same answer on what the suite validates -- the
reference's results of every case file and of scenario runs, scenario and side-session
scripts, each mutated at a random place into another JSON value -- and on the values
jsonschema-rs reads otherwise (tuples, ``Decimal``, ``int`` subclasses, lone surrogates,
deep nesting), which ``plain_json`` hands to jsonschema alone.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters import results
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance import scenario_programs, side_scenario_programs
from dsh_conformance.conformance.casefiles import cases
from dsh_conformance.conformance.strategies import json_values
from dsh_conformance.model import jsstr, scenario_script, side_scenario
from dsh_conformance.model.errors import DshError
from dsh_conformance.spec import compiled as compiled_module
from dsh_conformance.spec.compiled import MAX_DEPTH, Compiled, plain_json

Path = tuple[str | int, ...]
RUNS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _calls() -> Iterator[tuple[str, dict[str, Any]]]:
    for _, case in cases("dsh-cases/1"):
        if "op" in case:
            yield case["op"], case["args"]
        for step in case.get("steps", ()):
            yield step["op"], step["args"]


@cache
def corpus() -> tuple[tuple[str, Any], ...]:
    """(op, result) of the reference for every call of the case files and for the
    hand-picked scenario and side-session scripts."""
    adapter = ReferenceAdapter()
    out = []
    calls = [
        *_calls(),
        *(("scenario.run", script) for script in scenario_programs.EXAMPLES),
        *(("side.scenario.run", script) for script in side_scenario_programs.EXAMPLES),
    ]
    for op, args in calls:
        try:
            out.append((op, adapter.call(op, args)))
        except Exception:  # an error answer has no result to validate
            continue
    assert len({op for op, _ in out}) >= 20, "the corpus must reach most ops"
    return tuple(out)


def paths(value: Any, at: Path = ()) -> Iterator[Path]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*at, index))


def replaced(value: Any, at: Path, new: Any) -> Any:
    """A copy of *value* with the item at *at* replaced by *new* (deleted when *new* is
    the DELETE marker)."""
    if not at:
        return new
    head, rest = at[0], at[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest or new is not DELETE:
        copy[head] = replaced(value[head], rest, new)
    else:
        del copy[head]
    return copy


DELETE: Any = object()


@st.composite
def mutated(draw: st.DrawFn, value: Any) -> Any:
    """*value* with one place replaced by another JSON value, deleted, or kept."""
    where = draw(st.sampled_from(list(paths(value))))
    new = draw(st.one_of(st.just(DELETE), json_values(max_leaves=4), st.just(value)))
    if new is DELETE and not where:
        return value
    return replaced(value, where, new)


def slow_problem(op: str, value: Any) -> str | None:
    """``result_problem`` as it was before D-500: jsonschema alone."""
    validator = results._validator(op)
    assert validator is not None
    error = jsonschema.exceptions.best_match(validator.slow.iter_errors(value))
    if error is None:
        return None
    return (
        f"result of {op} does not match schema at "
        f"{results._pointer(error.absolute_path)}: {error.message}"
    )


@RUNS
@given(st.data())
def test_results_are_judged_as_jsonschema_judges_them(data: st.DataObject) -> None:
    op, result = data.draw(st.sampled_from(corpus()))
    if results._validator(op) is None:
        return
    value = data.draw(mutated(result))
    assert results.result_problem(op, value) == slow_problem(op, value)


@RUNS
@given(st.data(), json_values())
def test_any_json_value_is_judged_alike_by_every_op(data: st.DataObject, value: Any) -> None:
    op = data.draw(st.sampled_from(sorted({op for op, _ in corpus()})))
    if results._validator(op) is not None:
        assert results.result_problem(op, value) == slow_problem(op, value)


def test_the_corpus_results_are_valid() -> None:
    """The reference's own results pass, by the compiled path unless they hold a lone
    surrogate (which jsonschema-rs cannot read: jsonschema decides)."""
    for op, result in corpus():
        validator = results._validator(op)
        if validator is None:
            continue
        assert validator.is_valid(result), op
        try:
            orjson.dumps(result)
        except TypeError:
            continue
        assert validator._fast_valid(result), op


def _script_message(module: Any, script: Any) -> str | None:
    try:
        module.validate(script)
    except DshError as exc:
        return exc.message
    return None


def _slow_script_message(module: Any, script: Any) -> str | None:
    validator: Compiled = module._validator()
    errors = sorted(validator.slow.iter_errors(script), key=lambda e: list(e.absolute_path))
    if errors:
        best = jsonschema.exceptions.best_match(errors)
        assert best is not None
        return f"{''.join(f'/{p}' for p in best.absolute_path) or '/'}: {best.message}"
    return None


@RUNS
@given(st.data())
def test_scripts_are_judged_as_jsonschema_judges_them(data: st.DataObject) -> None:
    module, strategy = data.draw(
        st.sampled_from(
            [
                (scenario_script, scenario_programs.scripts()),
                (side_scenario, side_scenario_programs.scripts()),
            ]
        )
    )
    script = data.draw(mutated(data.draw(strategy)))
    validator: Compiled = module._validator()
    assert validator.is_valid(script) == validator.slow.is_valid(script)
    slow = _slow_script_message(module, script)
    if slow is not None:  # a schema failure reads as it always did
        assert _script_message(module, script) == slow


class _Int(int):
    pass


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


OTHERWISE: dict[str, Any] = {
    "tuple": ("a", "b"),
    "tuple item": [("a",)],
    "tuple member": {"x": (1, 2)},
    "Decimal": decimal.Decimal(1),
    "Decimal item": [decimal.Decimal("1.5")],
    "int subclass": _Int(3),
    "lone surrogate": "\ud800",
    "lone surrogate item": ["x\udc00y"],
    "lone surrogate key": {"\ud800": 1},
    "past MAX_DEPTH": _nested(MAX_DEPTH + 1),
}
SCHEMAS: tuple[dict[str, Any], ...] = (
    {"type": "array", "items": {"type": "string"}},
    {"type": "object", "additionalProperties": {"type": "array"}},
    {"type": "integer"},
    {"type": "array", "items": {"type": "number"}},
    {"type": "string"},
    {"$defs": {"any": {"type": "array", "items": {"$ref": "#/$defs/any"}}}, "$ref": "#/$defs/any"},
)


@pytest.mark.parametrize("name", sorted(OTHERWISE))
def test_values_jsonschema_rs_reads_otherwise_go_to_jsonschema(name: str) -> None:
    """A tuple is no array to jsonschema, a Decimal no integer, an int subclass an
    integer all the same; jsonschema-rs reads them otherwise or not at all, so each is
    judged by jsonschema alone."""
    value = OTHERWISE[name]
    assert not plain_json(value) or "surrogate" in name  # those jsonschema-rs refuses
    for schema in SCHEMAS:
        compiled = Compiled(schema)
        assert _outcome(compiled.is_valid, value) == _outcome(compiled.slow.is_valid, value)


def _outcome(is_valid: Any, value: Any) -> object:
    try:
        return bool(is_valid(value))
    except RecursionError:  # jsonschema's own limit, on the recursive schema
        return RecursionError


def test_a_deep_value_never_reaches_jsonschema_rs() -> None:
    """jsonschema-rs overflows its native stack (a crash, not an error) on a value nested
    tens of thousands deep under a recursive schema: such a value goes to jsonschema,
    which raises RecursionError as it always did."""
    deep = _nested(50_000)
    assert not plain_json(deep)
    compiled = Compiled(SCHEMAS[-1])
    with pytest.raises(RecursionError):
        compiled.is_valid(deep)


_HOSTILE_KEYS: dict[str, Any] = {"int key": {1: "a"}, "nested int key": [{"a": {2: 3}}]}


@pytest.mark.skipif(jsstr._FAST is None, reason="the C accelerator is not built")
@pytest.mark.parametrize("name", sorted({**OTHERWISE, **_HOSTILE_KEYS}))
def test_the_accelerator_reads_the_odd_values_as_plain_json_does(name: str) -> None:
    value = {**OTHERWISE, **_HOSTILE_KEYS}[name]
    assert jsstr._FAST.exact_json(value, MAX_DEPTH) is plain_json(value)


@pytest.mark.skipif(jsstr._FAST is None, reason="the C accelerator is not built")
@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1])
def test_the_accelerator_stops_at_max_depth_as_plain_json_does(depth: int) -> None:
    for value in (_nested(depth), {"a": _nested(depth - 1)}, [{"a": _nested(depth - 2)}]):
        assert jsstr._FAST.exact_json(value, MAX_DEPTH) is plain_json(value)


@pytest.mark.skipif(jsstr._FAST is None, reason="the C accelerator is not built")
@given(json_values())
def test_the_accelerator_agrees_with_plain_json(value: Any) -> None:
    assert jsstr._FAST.exact_json(value, MAX_DEPTH) is plain_json(value)
    assert compiled_module._exact(value) is plain_json(value)


def test_each_schema_is_compiled_once_per_process() -> None:
    assert results._validator("uri.encode") is results._validator("uri.encode")
    assert scenario_script._validator() is scenario_script._validator()


@pytest.mark.skipif(jsstr._FAST is None, reason="the C accelerator is not built")
@pytest.mark.parametrize("limit", [-1, 4097, "3", 2.0, True])
def test_the_accelerator_checks_its_limit(limit: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        jsstr._FAST.exact_json([], limit)


def test_the_catalog_is_judged_alike_compiled_or_not() -> None:
    """``load_catalog`` validates the TOML catalog compiled (D-537): the real catalog and
    broken copies of it get the same answer and the same errors from both validators."""
    import copy

    from dsh_conformance.spec import raw_catalog, schema

    compiled = Compiled(schema("catalog.json"))
    raw = raw_catalog()
    assert compiled.is_valid(raw)
    assert compiled.slow.is_valid(raw)
    assert list(compiled.iter_errors(raw)) == []
    broken: list[dict[str, Any]] = []
    for key, damage in (("level", "MUSTN'T"), ("id", 7), ("quote", None)):
        copied = copy.deepcopy(raw)
        copied["requirement"][0][key] = damage
        broken.append(copied)
    missing = copy.deepcopy(raw)
    del missing["decision"][0]["title"]
    broken.append(missing)
    for value in broken:
        assert not compiled.is_valid(value)
        words = sorted(e.message for e in compiled.iter_errors(value))
        assert words == sorted(e.message for e in compiled.slow.iter_errors(value))
        assert words
    assert raw == raw_catalog()  # the shared parse was not changed by the copies
