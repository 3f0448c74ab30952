"""Differential tests: every fast path in the model against its slow, obviously-correct form
(tests/slow_forms.py), on inputs biased toward the cases the fast path hands off."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters import wire
from dsh_conformance.conformance.strategies import HOSTILE, js_strings, json_values
from dsh_conformance.model import jsstr, mentions, uri
from dsh_conformance.model.errors import DshError

sys.path.insert(0, str(Path(__file__).parent))
import slow_forms

#: Code points that are not canonicalized first: pairs may sit as two surrogates.
raw_strings = st.lists(
    st.one_of(
        st.sampled_from(["\ud83d", "\ude00", "\ud800", "\udfff", "😀", "界", "a", '"', "\\", "\n"]),
        st.characters(),
    ),
    max_size=12,
).map("".join)


@given(raw_strings)
def test_quote_matches_the_slow_form_on_non_canonical_strings(s: str) -> None:
    assert jsstr.quote(s) == slow_forms.quote(s)


@given(st.one_of(raw_strings, js_strings()))
def test_has_surrogate_matches_the_slow_form(s: str) -> None:
    for text in (s, s + "😀", s + "界", s + "é"):  # every storage width CPython uses
        assert jsstr.has_surrogate(text) == slow_forms.has_surrogate(text)


@given(json_values())
def test_stringify_fast_path_matches_the_slow_form(value: object) -> None:
    assert jsstr.stringify(value) == slow_forms.stringify(value)


def _deep(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        {"a": 1.0},
        [1e21, 2**53 + 1, -(2**60)],
        {"0": 1, "a": 2},
        {"a": "\ud800"},
        {"a": jsstr.UNDEFINED, "b": (1, "x")},
        _deep(70),
    ],
)
def test_stringify_hands_off_what_orjson_spells_differently(value: object) -> None:
    assert jsstr.stringify(value) == slow_forms.stringify(value)


@given(st.one_of(js_strings(), raw_strings))
def test_uri_round_trip_is_canonical(s: str) -> None:
    assert uri.decode(uri.encode(s)) == jsstr.canonical(s)


_pieces = st.one_of(
    st.sampled_from(HOSTILE),
    st.sampled_from(
        [
            "@[",
            "@[a](",
            "](",
            "dsh-session:",
            "@[x](dsh-session:ImEi)",
            "dsh-session:ImIi",
            # What ends or escapes a label: the cases the search skips by (_label_floor).
            "]",
            "\\]",
            "\\\\]",
            "\\\n",
            "\\](dsh-session:ImEi)",
            "x" * 90,  # long stretches take the accelerator's search
        ]
    ),
    js_strings(max_size=8),
)


@given(st.lists(_pieces, max_size=16).map("".join))
@example("@[a](dsh-session:ImEi)")
@example("@[a]]@[b](dsh-session:ImEi)")
@example("@[a\\](dsh-session:ImEi)")
@example("@[a\\]b](dsh-session:ImEi)")  # an escaped "]" inside the label is no floor
@example("@[a\\\\](dsh-session:ImEi)")
@example("@[a\\\n@[b](dsh-session:ImEi)")
@example("@[" + "x" * 300 + "](dsh-session:ImEi)")
def test_mention_parse_matches_a_plain_global_regex_scan(text: str) -> None:
    def outcome(parse: object) -> object:
        try:
            return parse(text)  # type: ignore[operator]
        except DshError as exc:
            return exc.code

    result = outcome(mentions.parse)
    if isinstance(result, mentions.ParsedText):
        result = (result.text, [(r.session_id, r.label) for r in result.references])
    assert result == outcome(slow_forms.parse_mentions)


@given(json_values())
def test_wire_decode_fast_path_matches_the_exact_parser(value: object) -> None:
    line = wire.encode({"id": 1, "result": value})
    expected = jsstr.canonical_value(json.loads(line.decode("utf-8")))
    decoded = wire.decode(line.rstrip(b"\n"))
    assert decoded == expected
    assert type(decoded["result"]) is type(expected["result"])  # type: ignore[index]


@pytest.mark.parametrize(
    "text", [b'{"a":12345678901234567890123}', b'{"a":1e400}', b'{"a":"\\udc00"}']
)
def test_wire_decode_keeps_the_exact_parser_where_orjson_differs(text: bytes) -> None:
    expected = jsstr.canonical_value(json.loads(text.decode("utf-8")))
    assert wire.decode(text) == expected


@given(json_values())
def test_stringify_bytes_is_the_utf8_of_stringify(value: object) -> None:
    assert jsstr.stringify_bytes(value, b"\n") == jsstr.stringify(value).encode("utf-8") + b"\n"


@given(st.one_of(raw_strings, js_strings()))
def test_canonical_matches_the_slow_form(s: str) -> None:
    for text in (s, s + "😀", s + "界", s + "é", s * 40):  # every storage width, long runs
        assert jsstr.canonical(text) == slow_forms.canonical(text)


@given(st.lists(raw_strings, min_size=1, max_size=30).map("".join))
def test_quote_bytes_matches_the_slow_form_on_long_strings(s: str) -> None:
    """Long strings with many surrogates: the escaper's run handling, not one surrogate."""
    assert jsstr.quote_bytes(s) == slow_forms.quote(s).encode("utf-8")


#: base64url payloads near the canonical ones: the alphabet, its standard-alphabet twins,
#: padding and a stray space, at short and SIMD lengths.
_payload_chars = st.sampled_from(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= é"
)


@given(
    st.one_of(
        st.text(_payload_chars, max_size=12),
        st.builds(jsstr.base64url_encode, st.binary(max_size=300)),
        st.builds(
            lambda data, at, ch: (lambda p: p[:at] + ch + p[at + 1 :])(
                jsstr.base64url_encode(data)
            ),
            st.binary(min_size=1, max_size=300),
            st.integers(0, 400),
            _payload_chars,
        ),
    )
)
@example("YR")  # non-zero trailing bits
@example("YQ==")  # padding
@example("Y+/-")  # the standard alphabet beside the URL-safe one
@example("A" * 401)  # an impossible length, long
@example(jsstr.base64url_encode(bytes(range(200))))
def test_both_strict_base64url_decoders_match_the_slow_form(payload: str) -> None:
    def outcome(decode: object) -> object:
        try:
            return decode(payload)  # type: ignore[operator]
        except ValueError:
            return ValueError

    expected = outcome(slow_forms.base64url_decode_strict)
    assert outcome(jsstr._decode_short) == expected
    assert outcome(jsstr._decode_simd) == expected
    assert outcome(jsstr.base64url_decode_strict) == expected


#: JSON string literals near the canonical spellings: every escape JSON allows, in both
#: cases and at both backslash parities, around lone and paired surrogate escapes.
_literal_pieces = st.sampled_from(
    [
        "a",
        "界",
        "😀",
        "\\\\",
        '\\"',
        "\\n",
        "\\/",
        "\\u0041",
        "\\u001f",
        "\\u001F",
        "\\u000a",
        "\\ud800",
        "\\uD800",
        "\\ud80A",
        "\\udc00",
        "\\udfff",
        "\\ud83d\\ude00",
        "\\ud000",
        "\\\\ud800",
        "\\ud8",
        "\\u",
        "\\",
        "\x01",
        '"',
        " ",
    ]
)


@given(st.lists(_literal_pieces, max_size=12).map(lambda parts: '"' + "".join(parts) + '"'))
@example('"\\\\ud800"')  # an escaped backslash before "ud800": text, not an escape
@example('"\\\\\\ud800"')  # and one more backslash: an escape again
@example('"\\ud83d\\ude00"')  # an escaped pair: the canonical spelling is the character
@example('"\\ud800\\udbff"')  # two high surrogates: canonical
@example('"\\uD800"')  # upper-case hex
@example('"\\ud80A"')  # upper-case hex after a lower-case "d"
@example('"\\ud000"')  # not a surrogate: written raw
def test_unquote_bytes_accepts_exactly_the_canonical_spellings(literal: str) -> None:
    data = literal.encode("utf-8")
    for text in (data, b'"' + b"x" * 80 + data[1:]):  # the short and the long path

        def outcome(unquote: object, text: bytes = text) -> object:
            try:
                return unquote(text)  # type: ignore[operator]
            except ValueError:
                return ValueError

        assert outcome(jsstr.unquote_bytes) == outcome(slow_forms.unquote_bytes)


@given(st.one_of(js_strings(), raw_strings, st.lists(raw_strings, max_size=40).map("".join)))
def test_unquote_bytes_inverts_quote_bytes(s: str) -> None:
    assert jsstr.unquote_bytes(jsstr.quote_bytes(s)) == jsstr.canonical(s)
