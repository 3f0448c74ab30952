"""The accelerator's ``thaw`` (model/_jsfast.c, D-501) against ``frozen._thaw``.

The C walk copies exact JSON types and ``FrozenDict``; on anything else it answers
``NotImplemented`` and ``thaw`` copies the value in Python.  Either way the copy must be
``_thaw``'s, type for type and key order for key order, and share no container with its
source (a caller mutating an output must never reach model state).
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_conformance.conformance.strategies import json_values
from dsh_conformance.model.frozen import FrozenDict, _thaw, freeze, thaw

sys.path.insert(0, str(Path(__file__).parent))
from extension_kit import _jsfast, needs_extension


def shape(value: Any) -> Any:
    """*value* with every container's exact type and key order spelled out."""
    if isinstance(value, dict):
        return (type(value).__name__, [(type(k), k, shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [shape(v) for v in value])
    return (type(value), value)


def containers(value: Any) -> list[int]:
    if isinstance(value, dict | list):
        inner = value.values() if isinstance(value, dict) else value
        return [id(value), *(i for v in inner for i in containers(v))]
    if isinstance(value, FrozenDict | tuple):
        inner = value.values() if isinstance(value, FrozenDict) else value
        return [i for v in inner for i in containers(v)]
    return []


def agree(value: Any) -> None:
    want = _thaw(value)
    got = thaw(value)
    assert shape(got) == shape(want)
    assert not set(containers(got)) & set(containers(value))
    if _jsfast is not None:
        fast = _jsfast.thaw(value, FrozenDict)
        assert fast is NotImplemented or shape(fast) == shape(want)


class _Str(str):
    pass


class _Frozen(FrozenDict):
    __slots__ = ()


def _nested(depth: int) -> Any:
    """*depth* containers deep (FrozenDicts and tuples in turn)."""
    value: Any = "leaf"
    for level in range(depth):
        value = FrozenDict({"a": value}) if level % 2 else (value,)
    return value


@given(json_values())
def test_a_json_value_and_its_frozen_form_thaw_alike(value: Any) -> None:
    agree(value)
    agree(freeze(value))


ODD: dict[str, Any] = {
    "tuple inside": {"a": (1, (2, [3]))},
    "OrderedDict": collections.OrderedDict([("b", 1), ("a", {"c": 2})]),
    "str subclass": [_Str("x"), {"k": _Str("y")}],
    "int key": {1: "one", "a": FrozenDict({"b": 1})},
    "FrozenDict subclass": _Frozen({"a": [1]}),
    "inside a FrozenDict subclass": FrozenDict({"a": _Frozen({"b": 2})}),
    "a set": {"a": {1, 2}},
    "deep at the C limit": _nested(200),
    "deep past the C limit": _nested(201),
    "deeper": _nested(300),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_values_the_c_walk_leaves_to_python_thaw_alike(name: str) -> None:
    agree(ODD[name])


@needs_extension
def test_the_c_walk_takes_the_frozen_type_it_is_given_only() -> None:
    """Another type is read through no attribute: a FrozenDict it was not told about is
    left to Python, and a type without a ``_data`` slot reads nothing."""
    assert _jsfast is not None
    frozen = freeze({"a": [1, {"b": 2}]})
    assert _jsfast.thaw(frozen, FrozenDict) == {"a": [1, {"b": 2}]}
    assert _jsfast.thaw(_nested(200), FrozenDict) is not NotImplemented
    assert _jsfast.thaw(_nested(201), FrozenDict) is NotImplemented
    assert _jsfast.thaw(frozen, dict) is NotImplemented
    assert _jsfast.thaw(frozen, _Frozen) is NotImplemented
    with pytest.raises(TypeError):
        _jsfast.thaw(frozen, "FrozenDict")
    with pytest.raises(TypeError):
        _jsfast.thaw(frozen)  # type: ignore[call-arg]


@needs_extension
@given(
    st.recursive(st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c))
)
def test_plain_values_are_copied_by_the_c_walk(value: Any) -> None:
    assert _jsfast is not None
    copy = _jsfast.thaw(freeze(value), FrozenDict)
    assert copy is not NotImplemented
    assert shape(copy) == shape(_thaw(value))
