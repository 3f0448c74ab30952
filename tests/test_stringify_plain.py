"""The two widenings of ``JSON.stringify``'s fast path, against the slow form (D-497, D-498).

``jsstr._plain`` (and the accelerator's ``plain``) admits array-index keys that already
stand where ``JSON.stringify`` writes them (first in their object, ascending), and a
plain value orjson refuses (a lone surrogate) is written by the standard library's C
encoder and the surrogate escaper.  Both must give ``JSON.stringify``'s bytes exactly,
on the accelerated and the pure path, and everything else must still hand off to
``_write``: keys out of JavaScript's order, floats, big integers, other types.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters import wire
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.model import jsstr

sys.path.insert(0, str(Path(__file__).parent))
import slow_forms
from extension_kit import _jsfast, jsstr_path

#: Keys around the array-index rule: indices, near misses (leading zero, 2**32 - 1, too
#: long, a sign, a Unicode digit), ordinary keys, a lone surrogate.
_KEYS = st.one_of(
    st.sampled_from(["0", "1", "2", "10", "01", "00", "-1", "1a", "1.0", "٣", "²", "4294967294"]),
    st.sampled_from(["4294967295", "9999999999", "99999999999", "a", "", "type", "\ud800"]),
    st.integers(0, 2**32).map(str),
    js_strings(max_size=3),
)
#: Strings whose surrogates may be lone or a pair held as two code points.
_RAW = st.lists(
    st.sampled_from(["\ud83d", "\ude00", "\ud800", "\udfff", "😀", "界", "a", '"', "\\", "\n"]),
    max_size=6,
).map("".join)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    js_strings(max_size=6),
    _RAW,
    # what must still hand off to _write
    st.sampled_from([2**53 + 1, -(2**60), 1.0, -0.0, 1e21, 0.5, jsstr.UNDEFINED]),
)


def _index_first(indices: dict[int, Any], rest: dict[str, Any]) -> dict[str, Any]:
    """Array-index keys ascending, then *rest* (which may hold an index key itself)."""
    out = {str(i): v for i, v in sorted(indices.items())}
    out.update(rest)
    return out


def _objects(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.dictionaries(_KEYS, children, max_size=5),
        st.builds(
            _index_first,
            st.dictionaries(st.integers(0, 2**32 - 2), children, max_size=3),
            st.dictionaries(_KEYS, children, max_size=3),
        ),
    )


values = st.recursive(
    _LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        _objects(children),
    ),
    max_leaves=16,
)


def _paths() -> list[bool]:
    return [True, False] if _jsfast is not None else [False]


def _slow(value: object) -> bytes | None:
    """``JSON.stringify``'s bytes by the slow form, or None where it has none (a top-level
    ``undefined``)."""
    if value is jsstr.UNDEFINED:
        return None
    return slow_forms.stringify(value).encode("utf-8")


def _holds_a_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(map(_holds_a_surrogate, value)) or any(map(_holds_a_surrogate, value.values()))
    if isinstance(value, list | tuple):
        return any(map(_holds_a_surrogate, value))
    return False


LOCKSTEP_CONTENT = {"2": "b", "10": 2, "type": "text", "text": "sep-2 of 2", "01": "c"}


@given(values)
@example(LOCKSTEP_CONTENT)  # what the lockstep machines send and read back
@example({"meta": {"2": [1], "10": 1, "i": 1}})
@example({"10": 1, "2": 1})  # indices out of order: JSON.stringify writes "2" first
@example({"a": 1, "0": 1})  # an index after another key moves to the front
@example({"0": 1, "a": 2, "1": 3})
@example({"4294967294": 1, "4294967295": 2, "0": 3})  # 2**32 - 1 is no index; "0" is
@example({"0": "\ud800", "1": ["\ud83d", "\ude00", "\ude00\ud83d"], "\udfff": "x"})
@example(["\ud800" * 3, {"k": "\ud83d\ude00" + "\x00\x1f\x7f\u2028"}])
@example("\ud800")
def test_stringify_is_json_stringify_on_both_paths(value: object) -> None:
    expected = _slow(value)
    if expected is None:
        return
    for fast in _paths():
        with jsstr_path(fast):
            assert jsstr.stringify_bytes(value, b"\n") == expected + b"\n"
            assert jsstr.stringify_bytes(value) == expected
            assert jsstr.stringify(value).encode("utf-8") == expected


@given(values)
@example(LOCKSTEP_CONTENT)
@example({"0": "\ud800", "2": "x"})
def test_what_plain_admits_orjson_or_the_surrogate_path_writes_exactly(value: object) -> None:
    """The rule itself: a value ``_plain`` admits is written by orjson, or (refused: a
    lone surrogate) by ``_plain_with_surrogates``, exactly as ``JSON.stringify``."""
    if not jsstr._plain(value, 0):
        return
    try:
        got = orjson.dumps(value)
    except TypeError:
        assert _holds_a_surrogate(value)  # the one thing orjson refuses in a plain value
        got = jsstr._plain_with_surrogates(value)
    assert got == _slow(value)


_FLAT = st.dictionaries(_KEYS, st.one_of(st.none(), st.integers(0, 9), js_strings(max_size=2)))


@given(st.one_of(_FLAT, _objects(st.integers(0, 9))))
@example({"0": 1, "1": 2, "x": 3})
@example({"1": 1, "0": 2})
@example({"x": 1, "0": 2})
@example({"01": 1, "0": 2})  # "01" is no index: "0" after it still moves to the front
def test_plain_admits_exactly_the_objects_whose_key_order_is_javascripts(
    value: dict[str, Any],
) -> None:
    """For an object of plain members, ``plain`` says yes exactly when JavaScript's
    property order (``OrdinaryOwnPropertyKeys``, by the slow form) is insertion order."""
    in_order = slow_forms.own_keys(value) == list(value)
    assert jsstr._plain(value, 0) is in_order
    if _jsfast is not None:
        assert _jsfast.plain(value) is in_order


@given(st.lists(st.fixed_dictionaries({"id": st.integers(0, 2**31), "result": values}), max_size=5))
@example([{"id": 1, "result": LOCKSTEP_CONTENT}, {"id": 2, "result": {"s": "\ud800"}}])
@example([{"id": 1, "result": {"2": 1, "1": 2}}, {"id": 2, "result": 1.5}])
def test_the_wire_writes_replies_as_json_stringify(replies: list[dict[str, Any]]) -> None:
    """``wire.encode_all`` and ``wire.encode`` (what the served model writes) on both paths."""
    expected = [_slow(reply) + b"\n" for reply in replies]  # type: ignore[operator]
    for fast in _paths():
        with jsstr_path(fast):
            assert wire.encode_all(replies) == expected
            assert [wire.encode(reply) for reply in replies] == expected
