"""conformance/js_objects.py's ``js_ordered`` against its plain definition.

The fast form skips objects with no key that starts with a digit and copies scalars
without a call (issue 44: it was half of a differential stateful test); both must give
the same value in the same key order on every JSON value, index-like keys included.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given

from dsh_conformance.conformance.js_objects import is_array_index, js_ordered
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
