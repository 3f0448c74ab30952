"""JavaScript value semantics the host needs: strings as UTF-16, UTF-8 counts, JSON.stringify.

Python's json module decodes escaped surrogate pairs into one code point and keeps lone
surrogates as surrogate code points, so a str here is a JS string once adjacent surrogates
are recombined (`normalize`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from tests.independent_host.errors import HostError

_SURROGATE = re.compile("[\ud800-\udfff]")
_INDEX_KEY = re.compile(r"^(0|[1-9][0-9]*)$")


def normalize(text: str) -> str:
    """Recombine adjacent high/low surrogate code points into the astral character."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def char_bytes(char: str) -> int:
    """UTF-8 bytes of one code point as TextEncoder counts it (a lone surrogate is U+FFFD)."""
    point = ord(char)
    if point < 0x80:
        return 1
    if point < 0x800 or 0xD800 <= point <= 0xDFFF:
        return 2 if point < 0x800 else 3
    return 3 if point < 0x10000 else 4


def utf8_len(text: str) -> int:
    """UTF-8 byte length of a JS string (lone surrogates count as U+FFFD)."""
    text = normalize(text)
    return len(_SURROGATE.sub("\ufffd", text).encode("utf-8"))


def utf16_key(text: str) -> bytes:
    """A sort key comparing strings by UTF-16 code units, as JS `<` does."""
    return normalize(text).encode("utf-16-be", "surrogatepass")


def _string(text: str, tag_safe: bool) -> str:
    out = ['"']
    for char in normalize(text):
        point = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif point < 0x20:
            out.append(
                {8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(point, f"\\u{point:04x}")
            )
        elif 0xD800 <= point <= 0xDFFF:
            out.append(f"\\u{point:04x}")
        elif tag_safe and char == "<":
            out.append("\\u003c")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _number(value: float) -> str:
    """Number::toString for a finite double (the shortest round-trip digits)."""
    if value == 0:
        return "0"
    if value < 0:
        return "-" + _number(-value)
    mantissa, _, exp_text = repr(float(value)).partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + exponent - (len(whole + frac) - len((whole + frac).lstrip("0")))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    sign = "+" if n - 1 >= 0 else "-"
    body = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{body}e{sign}{abs(n - 1)}"


def _key_order(obj: dict[str, Any]) -> list[str]:
    """JS own-key order: array-index keys ascending first, then insertion order."""
    index = [k for k in obj if _INDEX_KEY.match(k) and int(k) < 2**32 - 1]
    rest = [k for k in obj if k not in set(index)]
    return sorted(index, key=int) + rest


def stringify(value: Any, *, tag_safe: bool = False) -> str:
    """JSON.stringify(value) for a JSON value; tag_safe also writes every '<' as \\u003c."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value, tag_safe)
    if isinstance(value, int):
        if abs(value) <= 2**53:
            return str(value)
        return _number(float(value))
    if isinstance(value, float):
        return _number(value) if math.isfinite(value) else "null"
    if isinstance(value, list):
        return "[" + ",".join(stringify(item, tag_safe=tag_safe) for item in value) + "]"
    if isinstance(value, dict):
        parts = [
            _string(key, tag_safe) + ":" + stringify(value[key], tag_safe=tag_safe)
            for key in _key_order(value)
        ]
        return "{" + ",".join(parts) + "}"
    raise HostError("DSH_JSON_NOT_SERIALIZABLE", f"not a JSON value: {type(value).__name__}")
