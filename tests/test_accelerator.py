"""The C accelerator (model/_jsfast.c) against jsstr.py's pure-Python definitions.

Every accelerated function must give the pure form's answer on every input, errors
included: each test computes both, with ``jsstr._FAST`` pointed at the extension and then
at ``None``.  Under CI the extension must be built, so the speed the reports claim is the
speed CI measured.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.conformance.strategies import HOSTILE, js_strings, json_values
from dsh_conformance.model import jsstr

sys.path.insert(0, str(Path(__file__).parent))
import slow_forms
from extension_kit import _jsfast, needs_extension

#: Strings at code-unit level: lone surrogates, split pairs, every storage width.
raw_strings = st.lists(
    st.one_of(
        st.sampled_from(["\ud83d", "\ude00", "\ud800", "\udbff", "\udc00", "\udfff"]),
        st.sampled_from(HOSTILE),
        st.characters(),
    ),
    max_size=40,
).map("".join)


def both(function: Callable[[Any], Any], value: Any) -> tuple[object, object]:
    """(accelerated, pure) outcomes of ``function(value)``: a result or the error."""
    outcomes = []
    for fast in (_jsfast, None):
        saved = jsstr._FAST
        jsstr._FAST = fast
        try:
            outcomes.append(function(value))
        except (ValueError, TypeError) as exc:  # the same error, word for word (D-207)
            outcomes.append((type(exc), str(exc)))
        finally:
            jsstr._FAST = saved
    return outcomes[0], outcomes[1]


@needs_extension
def test_the_extension_is_built_and_used() -> None:
    assert _jsfast is not None, "model/_jsfast.c did not build: pip install -e . needs a C compiler"
    if os.environ.get("DSH_CONFORMANCE_PURE", "") in ("", "0"):
        assert jsstr._FAST is _jsfast


#: Each width CPython stores a string in, and lengths around the 4-unit SWAR blocks.
def _widths(s: str) -> list[str]:
    return [s, s + "é", s + "界", s + "😀", "界" * 3 + s, s * 9]


@needs_extension
@given(st.one_of(raw_strings, js_strings()))
@example("\ud83d\ude00")
@example("abc\ud800")
@example("abcd\udbff\udc00")
def test_surrogate_scans_agree(s: str) -> None:
    for text in _widths(s):
        fast, pure = both(jsstr.canonical, text)
        assert fast == pure == slow_forms.canonical(text)
        assert both(jsstr.has_surrogate, text) == (slow_forms.has_surrogate(text),) * 2


@needs_extension
@given(st.one_of(raw_strings, js_strings()))
def test_utf8_length_agrees(s: str) -> None:
    for text in _widths(s):
        assert both(jsstr.utf8_length, text) == (slow_forms.utf8_length(text),) * 2


@needs_extension
@given(st.one_of(raw_strings, js_strings()))
@example("\ud83d\ude00")  # a pair held as two code points: canonicalized, then 4 bytes
@example("é\ud800")  # a lone surrogate stays as it is and counts 3 bytes
def test_canonical_utf8_length_agrees(s: str) -> None:
    for text in _widths(s):
        expected = (slow_forms.canonical(text), slow_forms.utf8_length(text))
        assert both(jsstr.canonical_utf8_length, text) == (expected,) * 2


@needs_extension
@given(st.one_of(raw_strings, js_strings(), st.text(min_size=100, max_size=600)))
def test_uri_payload_encoding_agrees(s: str) -> None:
    expected = jsstr.base64url_encode(slow_forms.quote(s).encode("utf-8"))
    assert both(jsstr.quote_base64url, s) == (expected, expected)


#: Payloads near canonical ones: a valid payload with one character replaced, cut or
#: extended, and short runs over the whole alphabet with its look-alikes.
_chars = st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= é")


def _mutate(payload: str, at: int, replacement: str) -> str:
    at %= len(payload) + 1
    return payload[:at] + replacement + payload[at + 1 :]


@needs_extension
@given(
    st.one_of(
        st.text(_chars, max_size=16),
        st.builds(jsstr.quote_base64url, st.one_of(raw_strings, js_strings())),
        st.builds(
            _mutate,
            st.builds(jsstr.quote_base64url, st.one_of(raw_strings, js_strings())),
            st.integers(0, 200),
            st.one_of(_chars, st.just(""), st.text(_chars, max_size=3)),
        ),
        # JSON texts that are not the canonical spelling of a string, base64url-encoded.
        st.builds(
            lambda text: jsstr.base64url_encode(text.encode("utf-8", "surrogatepass")),
            st.lists(
                st.sampled_from(
                    [
                        '"',
                        "a",
                        "\\u0041",
                        "\\/",
                        "\\ud800",
                        "\\uD800",
                        "\\ud83d\\ude00",
                        "\\u001f",
                        "\\u000a",
                        "\\n",
                        "\\",
                        "\x01",
                        "界",
                        "\ud800",
                        " ",
                        "1",
                    ]
                ),
                max_size=8,
            ).map("".join),
        ),
    )
)
@example("")
@example("IiI")  # '""'
@example("IiJ")  # '""' with non-zero unused bits (3 characters)
@example("ImFiIh")  # '"ab"' with non-zero unused bits (2 characters)
@example("IlxkODAwIg")  # '"\\d800"'
@example("Ilx1ZDgwMCI")  # '"\\ud800"'
@example("Ilx1ZDgzZFx1ZGUwMCI")  # '"\\ud83d\\ude00"': an escaped pair, not canonical
@example("IsCAIg")  # a stray continuation byte
@example("IsCvIg")  # an overlong encoding of '/'
@example("Iu2ggCI")  # a surrogate encoded in UTF-8
def test_uri_payload_decoding_agrees(payload: str) -> None:
    fast, pure = both(jsstr.unquote_base64url, payload)
    assert fast == pure


#: Texts dense in near misses of the needles the model searches for.
_haystacks = st.lists(
    st.sampled_from(
        [
            "dsh-session:",
            "dsh-session",
            "sh-session:",
            "d",
            ":",
            "@[",
            "@",
            "[",
            "界",
            "😀",
            "\ud800",
            "x" * 70,
            "é",
        ]
    ),
    max_size=40,
).map("".join)


@needs_extension
@given(
    _haystacks,
    st.sampled_from(["dsh-session:", "@[", "ab", "界:", "😀d", "\ud800d", "xx"]),
    st.integers(0, 3000),
    st.one_of(st.none(), st.integers(0, 3000)),
)
def test_find_agrees_with_str_find(text: str, needle: str, start: int, end: int | None) -> None:
    text = text * 8  # past the length where the vectorised search takes over
    if end is not None and end < start:
        start, end = end, start
    assert both(lambda t: jsstr.find(t, needle, start, end), text) == (
        (text.find(needle, start, len(text) if end is None else end),) * 2
    )


def _nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


class _Str(str):
    pass


@needs_extension
@given(
    st.one_of(
        json_values(),
        st.recursive(
            st.one_of(
                st.integers(-(2**60), 2**60),
                st.sampled_from([2**53, 2**53 + 1, -(2**53), -(2**53) - 1, 1.0, -0.0, True]),
                st.sampled_from([jsstr.UNDEFINED, _Str("x"), b"x", 10**30]),
                js_strings(max_size=4),
            ),
            lambda inner: st.one_of(
                st.lists(inner, max_size=3),
                st.lists(inner, max_size=3).map(tuple),
                st.dictionaries(
                    st.sampled_from(["a", "0", "9x", "٣", "", "b", "\ud800"]), inner, max_size=3
                ),
                # array-index keys, in JavaScript's order or not (D-497), and near misses
                st.dictionaries(
                    st.sampled_from(["0", "2", "10", "01", "4294967294", "4294967295", "a"]),
                    inner,
                    max_size=4,
                ),
                st.lists(st.integers(0, 2**32 - 2), max_size=3).map(
                    lambda keys: {str(k): k for k in sorted(keys)} | {"z": 0}
                ),
            ),
        ),
    )
)
@example(2**53)  # the largest safe integer, both signs
@example(-(2**53))
@example(_nested(64))
@example(_nested(65))
@example(_nested(66))
@example({"a": _nested(64)})
@example({"2": "b", "10": 2, "type": "text", "01": "c"})
@example({"10": 1, "2": 1})
@example({"a": 1, "0": 1})
@example({"4294967294": 1, "4294967295": 1, "0": 1})
def test_plain_agrees(value: object) -> None:
    assert _jsfast.plain(value) == jsstr._plain(value, 0)


# --- hostile arguments: each C function checks what it is given (D-207) --------------------


def outcome(function: Callable[..., Any], *args: Any) -> tuple[object, object]:
    """A result, or the error's type and message: errors must agree word for word."""
    try:
        return ("ok", function(*args))
    except Exception as exc:  # the error is the outcome compared
        return (type(exc), str(exc))


def on_path(fast: bool, function: Callable[..., Any], *args: Any) -> tuple[object, object]:
    saved, jsstr._FAST = jsstr._FAST, (_jsfast if fast else None)
    try:
        return outcome(function, *args)
    finally:
        jsstr._FAST = saved


class _Index:
    """An int-like index (``__index__``); its repr is the test id, so it must not vary."""

    def __index__(self) -> int:
        return 3

    def __repr__(self) -> str:
        return "_Index(3)"


class _Hostile(str):
    """A str subclass whose methods lie: both paths read its str value, never these."""

    def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
        return b"lie"

    def isascii(self) -> bool:
        return True

    def find(self, *args: Any, **kwargs: Any) -> int:  # type: ignore[override]
        return 99

    def __len__(self) -> int:
        return 0

    def __str__(self) -> str:
        return "lie"


#: (C function, its twin in jsstr): the twin is what every caller calls.
TWINS: list[tuple[str, Callable[..., Any]]] = [
    ("utf8_length", jsstr.utf8_length),
    ("canonical_length", jsstr.canonical_utf8_length),
    ("quote_base64url", jsstr.quote_base64url),
    ("unquote_base64url", jsstr.unquote_base64url),
]
WRONG_TYPES = [None, 1, True, 1.5, b"abc", bytearray(b"abc"), ["abc"], memoryview(b"abc"), _Index()]


@needs_extension
@pytest.mark.parametrize("bad", WRONG_TYPES, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize(("name", "twin"), TWINS, ids=[name for name, _ in TWINS])
def test_a_wrong_type_is_the_same_type_error_on_both_paths(
    name: str, twin: Callable[..., Any], bad: object
) -> None:
    expected = (TypeError, f"{name}() needs a str, not {type(bad).__name__}")
    assert outcome(getattr(_jsfast, name), bad) == expected  # the C function itself
    assert on_path(True, twin, bad) == on_path(False, twin, bad) == expected


@needs_extension
@pytest.mark.parametrize("bad", WRONG_TYPES, ids=lambda v: type(v).__name__)
def test_the_surrogate_scan_refuses_a_wrong_type(bad: object) -> None:
    assert outcome(_jsfast.surrogates, bad) == (
        TypeError,
        f"surrogates() needs a str, not {type(bad).__name__}",
    )
    for twin in (jsstr.canonical, jsstr.has_surrogate):
        assert on_path(True, twin, bad) == on_path(False, twin, bad)
        assert on_path(False, twin, bad)[0] is TypeError


@needs_extension
@pytest.mark.parametrize("value", ["abc", "é\ud800", "😀\ud83d\ude00x" * 50, "IiI", "Ilx1ZDgwMCI"])
def test_a_str_subclass_is_read_as_its_str_value(value: str) -> None:
    hostile = _Hostile(value)
    for name, twin in TWINS:
        exact = on_path(False, twin, value)
        assert outcome(getattr(_jsfast, name), hostile) == outcome(getattr(_jsfast, name), value)
        assert on_path(True, twin, hostile) == on_path(False, twin, hostile) == exact
    assert _jsfast.surrogates(hostile) == _jsfast.surrogates(value)
    for twin in (jsstr.canonical, jsstr.has_surrogate):
        assert on_path(True, twin, hostile) == on_path(False, twin, hostile) == outcome(twin, value)
    needle = _Hostile("\ud83d\ude00x")
    assert outcome(_jsfast.find, hostile, needle, 0, None) == ("ok", value.find("\ud83d\ude00x"))
    assert _jsfast.plain(hostile) is jsstr._plain(hostile, 0) is False


#: Start and end indexes around every edge: negative, past the text, beyond 64 bits.
_INDEXES = [0, 1, 299, 300, 301, 2**31, 2**63, 2**70, -1, -(2**70), True, _Index()]
_BAD_INDEXES = [1.0, "1", b"1", [1]]


@needs_extension
@pytest.mark.parametrize("start", _INDEXES + _BAD_INDEXES, ids=repr)
@pytest.mark.parametrize("end", [None, *_INDEXES, *_BAD_INDEXES], ids=repr)
def test_find_ranges_agree_on_every_edge(start: Any, end: Any) -> None:
    text = ("ab" * 149) + "xy"  # 300 units: long enough for the vectorised search
    for needle in ("xy", "b", "", "abx", "yz" * 200):
        c_call = outcome(_jsfast.find, text, needle, start, end)
        accelerated = on_path(True, jsstr.find, text, needle, start, end)
        pure = on_path(False, jsstr.find, text, needle, start, end)
        assert c_call == accelerated == pure, (needle, start, end)
        index = [start, end]
        if all(i is None or isinstance(i, int | _Index) for i in index):
            lo, hi = (i if i is None else int(i.__index__()) for i in index)
            if lo >= 0 and (hi is None or hi >= 0):
                assert pure == ("ok", text.find(needle, lo, hi))
        if isinstance(start, int) and start < 0 and not isinstance(start, bool):
            assert pure == (ValueError, "find() needs 0 <= start and 0 <= end")
        if type(start) in (float, str, bytes, list):
            message = f"find() needs integer start and end, not {type(start).__name__}"
            assert pure == (TypeError, message)


@needs_extension
@pytest.mark.parametrize(
    "args",
    [(), ("a",), ("a", "b", 0, 1, 2), (1, "b"), ("a", None), ("a", b"b")],
    ids=repr,
)
def test_find_refuses_the_wrong_arguments(args: tuple[object, ...]) -> None:
    fast = outcome(_jsfast.find, *args)
    assert fast[0] is TypeError
    if 2 <= len(args) <= 4:
        assert on_path(False, jsstr.find, *args) == fast


@needs_extension
@pytest.mark.parametrize(
    "value",
    [_Hostile("x"), {"a": _Hostile("x")}, {_Hostile("a"): 1}, [object()], {1: 2}, 10**30, 1.5],
    # a stable id (no object address), so every collection names the same tests
    ids=lambda v: re.sub(r" at 0x[0-9a-f]+", "", repr(v)),
)
def test_plain_reads_only_exact_types(value: object) -> None:
    assert _jsfast.plain(value) is jsstr._plain(value, 0) is False


@needs_extension
def test_long_strings_of_every_width_agree() -> None:
    """A megabyte or so per storage width: no scan reads past its string (the sanitizer
    job, tools/sanitize.sh, runs this under AddressSanitizer)."""
    for unit in ("a", "é", "界", "😀", "\ud800", "\ud83d\ude00"):
        text = unit * (1 << 16) + "xy"
        for name, twin in TWINS[:3]:
            assert on_path(True, twin, text) == on_path(False, twin, text), (name, unit)


#: The accelerator's whole surface (D-207, D-208, D-501, D-538): pure functions of
#: strings, two walks of JSON values and projection's pass over events.
PURE_FUNCTIONS = frozenset(
    {"surrogates", "utf8_length", "canonical_length", "find", "plain", "exact_json", "thaw"}
    | {"plain_projection"}
    | {"quote_base64url", "unquote_base64url"}
)


@needs_extension
def test_the_extension_exports_only_pure_string_functions() -> None:
    """No transport code in model/: the request and reply loops (answer, take) are gone,
    and nothing else but the pure functions is exported."""
    exported = {name for name in dir(_jsfast) if not name.startswith("_")}
    assert exported == PURE_FUNCTIONS
    stub = (Path(jsstr.__file__).parent / "_jsfast.pyi").read_text(encoding="utf-8")
    declared = {line.split("(")[0][4:] for line in stub.splitlines() if line.startswith("def ")}
    assert declared == PURE_FUNCTIONS
