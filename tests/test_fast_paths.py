"""Differential tests: every fast path in the model against its slow, obviously-correct form
(tests/slow_forms.py), on inputs biased toward the cases the fast path hands off."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
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
        ["@[", "@[a](", "](", "dsh-session:", "@[x](dsh-session:ImEi)", "dsh-session:ImIi"]
    ),
    js_strings(max_size=8),
)


@given(st.lists(_pieces, max_size=12).map("".join))
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
