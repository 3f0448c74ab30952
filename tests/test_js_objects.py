"""conformance/js_objects.py's ``js_ordered`` and ``js_dumps`` against their plain definitions.

The fast form skips objects with no key that starts with a digit and copies scalars
without a call (issue 44: it was half of a differential stateful test); both must give
the same value in the same key order on every JSON value, index-like keys included.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dsh_conformance.conformance.js_objects import (
    is_array_index,
    js_dumps,
    js_form,
    js_ordered,
    js_same,
)
from dsh_conformance.conformance.strategies import json_values


def plain(value: Any) -> Any:
    """The definition: array-index keys ascending, then the others in insertion order."""
    if isinstance(value, dict):
        indices = sorted((k for k in value if is_array_index(k)), key=int)
        others = [k for k in value if not is_array_index(k)]
        return {k: plain(value[k]) for k in indices + others}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


@given(json_values())
def test_js_ordered_is_the_plain_definition(value: Any) -> None:
    got, want = js_ordered(value), plain(value)
    assert json.dumps(got) == json.dumps(want)
    assert got == want


def test_index_keys_move_first_and_tuples_become_lists() -> None:
    value = {"b": 1, "10": 2, "a": (3, {"01": 4, "1": 5}), "2": None}
    assert json.dumps(js_ordered(value)) == (
        '{"2": null, "10": 2, "b": 1, "a": [3, {"1": 5, "01": 4}]}'
    )


OPTIONS = (
    {},
    {"ensure_ascii": False},
    {"separators": (",", ":"), "ensure_ascii": True},
    {"separators": (",", ":"), "ensure_ascii": False},
)


@given(json_values())
def test_js_dumps_is_the_dump_of_the_ordered_copy(value: Any) -> None:
    for options in OPTIONS:
        assert js_dumps(value, **options) == json.dumps(plain(value), **options)


def test_js_dumps_reorders_index_keys_at_any_depth() -> None:
    """The fast path is taken only when no key starts with a digit; a digit-led string
    value or an escaped quote merely takes the slow path."""
    value = {"a": [{"z": 1, "7": 2}], "s": '1 "2', "t": '"3'}
    for options in OPTIONS:
        assert js_dumps(value, **options) == json.dumps(plain(value), **options)
    assert js_dumps({"a": [{"z": 1, "7": 2}]}) == '{"a": [{"7": 2, "z": 1}]}'
    assert js_dumps({"b": 1, "a": 2}) == '{"b": 1, "a": 2}'


#: Scalars whose spellings collide in one serializer or the other (NaN and null in orjson).
TRICKY = [None, float("nan"), float("inf"), -float("inf"), 0, 0.0, -0.0, 1, 1.0, True, False]
TRICKY += [2**64, 2**64 + 1, -(2**63) - 1, "\ud800", "x\udc00", "", "0", "null", 1e16]


def trees(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = st.sampled_from(["a", "b", "0", "1", "10", "01", "null", "\ud800"])
    return st.recursive(
        leaves,
        lambda c: (
            st.lists(c, max_size=3)
            | st.lists(c, max_size=3).map(tuple)
            | st.dictionaries(keys, c, max_size=3)
        ),
        max_leaves=8,
    )


values = trees(st.sampled_from(TRICKY) | json_values(max_leaves=3))


def dumps_agree(a: Any, b: Any) -> bool:
    return json.dumps(plain(a), ensure_ascii=False) == json.dumps(plain(b), ensure_ascii=False)


@given(values, values)
def test_js_same_is_equality_of_the_ordered_dumps(a: Any, b: Any) -> None:
    assert js_same(a, b) is dumps_agree(a, b)
    assert js_same(a, plain(a))


@given(values)
def test_a_value_and_its_reordered_copy_are_the_same(value: Any) -> None:
    """What js_ordered moves (index keys) and what JSON cannot tell apart (a tuple and a
    list) leaves the form alone; one changed scalar does not."""
    assert js_same(value, js_ordered(value))
    assert js_same([value, float("nan")], [plain(value), float("nan")])
    assert not js_same([value, None], [value, float("nan")])
    assert not js_same({"k": value, "n": 1}, {"k": value, "n": True})


def test_js_form_is_taken_at_once() -> None:
    value: dict[str, Any] = {"events": [{"a": 1}]}
    form = js_form(value)
    value["events"].append({"b": 2})
    assert js_form(value) != form
