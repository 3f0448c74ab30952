"""The C accelerator (model/_jsfast.c) against jsstr.py's pure-Python definitions.

Every accelerated function must give the pure form's answer on every input, errors
included: each test computes both, with ``jsstr._FAST`` pointed at the extension and then
at ``None``.  Under CI the extension must be built, so the speed the reports claim is the
speed CI measured.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
    """(accelerated, pure) outcomes of ``function(value)``: a result or the error type."""
    outcomes = []
    for fast in (_jsfast, None):
        saved = jsstr._FAST
        jsstr._FAST = fast
        try:
            outcomes.append(function(value))
        except ValueError:  # orjson's and binascii's errors are ValueErrors too
            outcomes.append(ValueError)
        except TypeError:
            outcomes.append(TypeError)
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
def test_plain_agrees(value: object) -> None:
    assert _jsfast.plain(value) == jsstr._plain(value, 0)
