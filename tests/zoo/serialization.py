"""Serialization defects: tag-safe JSON (SER-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.model import jsstr
from zoo import Area
from zoo._base import Broken

AREA = Area(capabilities=["serialization"], requirements=["SER-*"])


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _well_formed(value: Any) -> Any:
    if isinstance(value, str):
        return jsstr.utf8_decode(jsstr.utf8_encode(value))
    if isinstance(value, dict):
        return {_well_formed(k): _well_formed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_well_formed(v) for v in value]
    return value


class UnescapedLessThan(Broken):
    name = "raw '<' in data"
    invariant = "Leaves '<' in string data unescaped, so data can spell a closing tag."
    kills = frozenset({"SER-001", "SER-003"})
    collateral_ok = frozenset({"SER-004"})

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        return str(self.reference.call("json.tagSafe", args)).replace("\\u003c", "<")


class AsciiEscapes(Broken):
    name = "non-ASCII escaped"
    invariant = (
        "Writes every non-ASCII character as a \\uXXXX "
        "escape (lossless, not JSON.stringify's bytes)."
    )
    kills = frozenset({"SER-004"})

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        out = str(self.reference.call("json.tagSafe", args))
        return "".join(
            c if u < 0x80 else f"\\u{u:04x}" for c in out for u in jsstr.to_code_units(c)
        )


class SortedKeys(Broken):
    name = "sorted object keys"
    invariant = "Serializes object keys in sorted order instead of JSON.stringify's order."
    kills = frozenset({"SER-004"})

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        if "value" not in args:
            return self.reference.call("json.tagSafe", args)
        return self.reference.call("json.tagSafe", {"value": _sorted(args["value"])})


class UndefinedAsNull(Broken):
    name = "undefined serialized as null"
    invariant = "Serializes a missing (undefined) value as `null` instead of rejecting it."
    kills = frozenset({"SER-005"})

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        if "value" not in args:
            return "null"
        return self.reference.call("json.tagSafe", args)


class LossySurrogates(Broken):
    name = "lone surrogates replaced"
    invariant = (
        "Replaces lone surrogates by U+FFFD, so the output no longer parses back to the input."
    )
    kills = frozenset({"SER-002"})
    collateral_ok = frozenset({"SER-004"})

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        if "value" not in args:
            return self.reference.call("json.tagSafe", args)
        return self.reference.call("json.tagSafe", {"value": _well_formed(args["value"])})


MEMBERS = (UnescapedLessThan, AsciiEscapes, SortedKeys, UndefinedAsNull, LossySurrogates)
