"""Record lines are validated by the compiled schema and worded by jsonschema (D-499).

``record/schema.py`` checks every line it writes (``conform``) and reads (``check_line``)
against spec/schemas/record.json.  jsonschema-rs now says whether a line is valid and
jsonschema names the first error of a line it does not call valid: these tests hold
both functions to what the pure jsonschema validator alone gives, the same line kept,
the same fields left out with the same words, the same ``RecordError`` word for word, on
lines the writer writes and on those lines broken at a random place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dsh_conformance.conformance.strategies import json_values
from dsh_conformance.errors import RecordError
from dsh_conformance.model import jsstr
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, TestResult
from dsh_conformance.record import schema as record_schema
from dsh_conformance.spec import schema
from dsh_conformance.spec.compiled import Compiled

RUNS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def _pure() -> dict[str, jsonschema.Draft202012Validator]:
    """The validators record/schema.py used before D-499: jsonschema alone."""
    defs = schema("record.json")["$defs"]
    return {
        kind: jsonschema.Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{kind}"})
        for kind in ("header", "test", "footer")
    }


@cache
def lines() -> tuple[dict[str, Any], ...]:
    """A header, tests of every outcome and a footer, as the writer writes them."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "record.jsonl"
        writer = RecordWriter(path)
        writer.header(
            {
                "suite_version": "0",
                "spec_profile": "seed",
                "adapter": {
                    "name": "x",
                    "capabilities": ["uri"],
                    "implementation": {"name": "y", "components": {"a": "1"}},
                },
                "selected": 3,
                "filters": {"requirements": ["*"]},
            }
        )
        for index, outcome in enumerate(Outcome):
            writer.test(
                TestResult(
                    nodeid=f"conformance/test_x.py::t{index}",
                    outcome=outcome,
                    requirements=["URI-001"],
                    capabilities=["uri"],
                    duration=0.5,
                    message="m",
                    detail="fail" if outcome is Outcome.XFAIL else "",
                    blame=["URI-001"],
                    request='{"op":"x","args":{}}',
                    reviews=[{"requirement": "URI-001", "sha256": "0" * 64, "text": "t"}],
                )
            )
        writer.footer(
            {
                "status": "complete",
                "expectation_problems": [{"id": "URI-001", "kind": "stale", "message": "m"}],
                "calls": 3,
            }
        )
        writer.close()
        return tuple(jsstr.parse(text) for text in path.read_text("utf-8").splitlines())  # type: ignore[misc]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = _replaced(copy[head], rest, new)
    return copy


def _with_pure(function: Callable[[], Any]) -> Any:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(record_schema, "_validators", _pure)
        return _outcome(function)


def _outcome(function: Callable[[], Any]) -> Any:
    try:
        return ("ok", function())
    except RecordError as exc:
        return ("error", exc.code, str(exc), exc.hint)


#: Values a broken line may hold: JSON of every kind, and what jsonschema-rs reads
#: otherwise or not at all (a lone surrogate, a float for an integer, big integers).
_VALUES = st.one_of(
    json_values(),
    st.sampled_from(["\ud800", 1.0, -1, 2**64 + 1, -(2**70), "", "conformance/", "0" * 64]),
    st.sampled_from(["0" * 64 + "\n", "conformance/x\n", "pass", "xfail", True, None, [], {}]),
)


@RUNS
@given(data=st.data(), value=_VALUES)
def test_a_broken_line_is_worded_as_jsonschema_words_it(data: st.DataObject, value: Any) -> None:
    line = data.draw(st.sampled_from(lines()))
    path = data.draw(st.sampled_from(list(_paths(line))[1:]))
    broken = _replaced(line, path, value)
    compiled = _outcome(lambda: record_schema.check_line(broken, "line 1"))
    assert compiled == _with_pure(lambda: record_schema.check_line(broken, "line 1"))
    conformed = _outcome(lambda: record_schema.conform(broken))
    assert conformed == _with_pure(lambda: record_schema.conform(broken))


@pytest.mark.parametrize("index", range(len(lines())))
def test_the_writers_lines_are_valid_on_both(index: int) -> None:
    line = lines()[index]
    assert _outcome(lambda: record_schema.check_line(line, "l")) == ("ok", line)
    assert _with_pure(lambda: record_schema.check_line(line, "l")) == ("ok", line)
    assert record_schema.conform(line) == (line, [])


@given(value=_VALUES)
@example({"type": "test", "nodeid": "elsewhere/x"})
@example({"type": "header", "format": "dsh-conformance-record", "format_version": 1.0})
def test_any_value_is_judged_alike(value: Any) -> None:
    compiled = _outcome(lambda: record_schema.check_line(value, "line 2"))
    assert compiled == _with_pure(lambda: record_schema.check_line(value, "line 2"))


def test_the_validators_are_compiled() -> None:
    """The speed this file holds to the old answers: each kind is a compiled schema."""
    assert all(isinstance(v, Compiled) for v in record_schema._validators().values())
