"""The JavaScript-string core, against vectors printed by Node 20 (not by the model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_conformance.conformance.strategies import (
    INDEX_LIKE_KEYS,
    code_unit_strings,
    js_strings,
    json_values,
    object_keys,
)
from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError

sys.path.insert(0, str(Path(__file__).parent))
import slow_forms


@pytest.mark.parametrize(
    ("value", "js"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.5, "1.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (-2.5e-10, "-2.5e-10"),
        (2**53, "9007199254740992"),
        (2**64, "18446744073709552000"),
        (2**60, "1152921504606847000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (100.0, "100"),
        (12345.678, "12345.678"),
    ],
)
def test_number_to_string_matches_node(value: float, js: str) -> None:
    assert jsstr.number_to_string(value) == js


@pytest.mark.parametrize(
    ("s", "units", "utf8"),
    [
        ("", [], 0),
        ("a", [0x61], 1),
        ("\ud800", [0xD800], 3),
        ("😀", [0xD83D, 0xDE00], 4),
        ("\ud83d\ude00", [0xD83D, 0xDE00], 4),
        ("\ude00\ud83d", [0xDE00, 0xD83D], 6),
        ("界", [0x754C], 3),
    ],
)
def test_code_units_and_byte_length(s: str, units: list[int], utf8: int) -> None:
    assert jsstr.to_code_units(s) == units
    assert jsstr.utf8_length(s) == utf8
    assert jsstr.from_code_units(units) == jsstr.canonical(s)


def test_a_pair_written_as_two_escapes_is_the_astral_character() -> None:
    assert jsstr.canonical("\ud83d\ude00") == "😀"
    assert jsstr.js_length("😀") == 2


def test_text_encoder_writes_lone_surrogates_as_replacement() -> None:
    assert jsstr.utf8_encode("a\ud800b") == b"a\xef\xbf\xbdb"


@given(code_unit_strings(max_size=40))
def test_canonical_is_idempotent_and_keeps_code_units(s: str) -> None:
    units = jsstr.to_code_units(s)
    assert jsstr.canonical(s) == s
    assert jsstr.from_code_units(units) == s


@given(js_strings())
def test_quote_parses_back_and_is_valid_utf8(s: str) -> None:
    text = jsstr.quote(s)
    text.encode("utf-8")  # never holds a raw lone surrogate
    assert jsstr.canonical(json.loads(text)) == s


def test_stringify_rejects_non_json() -> None:
    cyclic: list[object] = []
    cyclic.append(cyclic)
    for bad in (cyclic, {1: "a"}, {"a": {1, 2}}, b"x", jsstr.UNDEFINED):
        with pytest.raises(DshError):
            jsstr.stringify(bad)


def test_stringify_mirrors_js_undefined_handling() -> None:
    assert jsstr.stringify({"a": jsstr.UNDEFINED, "b": 1}) == '{"b":1}'
    assert jsstr.stringify([jsstr.UNDEFINED]) == "[null]"
    assert jsstr.stringify([float("nan"), float("inf")]) == "[null,null]"


def test_parse_rejects_nan_literals() -> None:
    for text in ("NaN", "Infinity", "-Infinity", "[NaN]"):
        with pytest.raises(ValueError, match="JSON"):
            jsstr.parse(text)


@given(st.binary(max_size=24))
def test_strict_base64url_round_trip(data: bytes) -> None:
    assert jsstr.base64url_decode_strict(jsstr.base64url_encode(data)) == data


def test_orjson_fast_path_spells_strings_like_json_stringify() -> None:
    """quote() trusts orjson for well-formed strings; check it over every code point
    against Python's json (which agrees with JSON.stringify for well-formed strings)."""
    import orjson

    for code in (*range(0xD800), *range(0xE000, 0x110000, 3)):
        ch = chr(code)
        assert orjson.dumps(ch).decode() == json.dumps(ch, ensure_ascii=False), hex(code)


@given(
    st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/ ", max_size=12
    )
)
def test_strict_base64url_accepts_exactly_canonical_payloads(payload: str) -> None:
    try:
        data = jsstr.base64url_decode_strict(payload)
    except ValueError:
        import base64

        try:
            data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        except Exception:
            return
        assert jsstr.base64url_encode(data) != payload
        return
    assert jsstr.base64url_encode(data) == payload


# --- JSON.stringify key order (D-12) and the stringify fast path ---------------------------


@pytest.mark.parametrize(
    ("text", "node"),
    [
        # JSON.stringify(JSON.parse(text)) printed by Node v20.20.2.
        ('{"a":1,"0":2}', '{"0":2,"a":1}'),
        (
            '{"10":"ten","2":"two","b":"b","1":"one","a":"a","0":"zero"}',
            '{"0":"zero","1":"one","2":"two","10":"ten","b":"b","a":"a"}',
        ),
        ('{"x":0,"4294967295":1,"4294967294":2}', '{"4294967294":2,"x":0,"4294967295":1}'),
        (
            '{"01":1,"-1":2,"1.5":3,"1e3":4," 1":5,"+1":6,"-0":7,"00":8,"\u0661":9,"7":10}',
            '{"7":10,"01":1,"-1":2,"1.5":3,"1e3":4," 1":5,"+1":6,"-0":7,"00":8,"\u0661":9}',
        ),
        (
            '{"m":{"z":[{"5":1,"t":2,"3":3}],"1":true},"0":null}',
            '{"0":null,"m":{"1":true,"z":[{"3":3,"5":1,"t":2}]}}',
        ),
    ],
)
def test_stringify_key_order_matches_node(text: str, node: str) -> None:
    assert jsstr.stringify(json.loads(text)) == node


@given(st.lists(object_keys(), max_size=8))
def test_property_order_matches_the_slow_form(keys: list[str]) -> None:
    obj = dict.fromkeys(keys, 0)
    assert jsstr.property_order(obj) == slow_forms.own_keys(obj)
    for key in keys:
        assert jsstr.is_array_index(key) == slow_forms.is_array_index(key)


def test_index_like_keys_include_indices_and_near_misses() -> None:
    flags = {k: slow_forms.is_array_index(k) for k in INDEX_LIKE_KEYS}
    assert flags["4294967294"]
    assert not flags["4294967295"]
    assert not flags["01"]
    assert not flags["-1"]


@given(json_values())
def test_stringify_matches_the_slow_form(value: object) -> None:
    assert jsstr.stringify(value) == slow_forms.stringify(value)
