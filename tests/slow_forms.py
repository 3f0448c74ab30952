"""Slow, obviously-correct forms of the JavaScript-string core, written from the ECMAScript
text one step at a time, for differential tests of model/jsstr.py's fast paths.

Nothing here is fast or clever on purpose: each function follows its spec algorithm
literally so that a disagreement points at the fast path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dsh_conformance.model import jsstr

#: QuoteJSONString's table of short escapes (ES2019 24.5.2.2).
SHORT_ESCAPES = {
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
    '"': '\\"',
    "\\": "\\\\",
}


def code_points(s: str) -> list[int]:
    """UTF16DecodeString: code units, pairs combined, lone surrogates kept."""
    units = list(s.encode("utf-16-le", "surrogatepass"))
    units16 = [units[i] | (units[i + 1] << 8) for i in range(0, len(units), 2)]
    out: list[int] = []
    i = 0
    while i < len(units16):
        u = units16[i]
        if 0xD800 <= u <= 0xDBFF and i + 1 < len(units16) and 0xDC00 <= units16[i + 1] <= 0xDFFF:
            out.append(0x10000 + ((u - 0xD800) << 10) + (units16[i + 1] - 0xDC00))
            i += 2
        else:
            out.append(u)
            i += 1
    return out


def quote(s: str) -> str:
    """QuoteJSONString, well-formed (ES2019): lone surrogates as lowercase ``\\udxxx``."""
    out = ['"']
    for c in code_points(s):
        ch = chr(c)
        if ch in SHORT_ESCAPES:
            out.append(SHORT_ESCAPES[ch])
        elif c < 0x20 or 0xD800 <= c <= 0xDFFF:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def is_array_index(key: str) -> bool:
    """CanonicalNumericIndexString-style test: ToString(ToUint32(key)) === key, not 2**32-1."""
    try:
        n = int(key)
    except ValueError:
        return False
    return str(n) == key and 0 <= n < 2**32 - 1


def own_keys(obj: Mapping[str, object]) -> list[str]:
    """OrdinaryOwnPropertyKeys: array indices ascending, then the rest in insertion order."""
    keys = list(obj)
    return sorted([k for k in keys if is_array_index(k)], key=int) + [
        k for k in keys if not is_array_index(k)
    ]


def number(x: float) -> str:
    """Number::toString of a JS number (a Python int is the double it rounds to)."""
    if not math.isfinite(x):
        return "null"
    return jsstr.number_to_string(float(x) if isinstance(x, int) and abs(x) > 2**53 else x)


def stringify(value: object) -> str:
    """SerializeJSONProperty for JSON values, no gap, no replacer (undefined members skipped)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, Mapping):
        members = [
            quote(k) + ":" + stringify(value[k])
            for k in own_keys(value)
            if value[k] is not jsstr.UNDEFINED
        ]
        return "{" + ",".join(members) + "}"
    if isinstance(value, list | tuple):
        items = ["null" if v is jsstr.UNDEFINED else stringify(v) for v in value]
        return "[" + ",".join(items) + "]"
    raise TypeError(type(value).__name__)


def utf8_length(s: str) -> int:
    """Buffer.byteLength: each code point's UTF-8 length, a lone surrogate as U+FFFD (3)."""
    total = 0
    for c in code_points(s):
        if 0xD800 <= c <= 0xDFFF:
            total += 3
        elif c < 0x80:
            total += 1
        elif c < 0x800:
            total += 2
        elif c < 0x10000:
            total += 3
        else:
            total += 4
    return total


def has_surrogate(s: str) -> bool:
    """Any code point in U+D800..U+DFFF."""
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def parse_mentions(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A mention parse as one plain global regex scan (``search`` from every position):
    the form ``model/mentions.parse`` must agree with.  Returns (text, [(id, label)])."""
    from dsh_conformance.model import mentions, uri

    text = jsstr.canonical(text)
    out: list[str] = []
    found: list[tuple[str, str]] = []
    pos = 0
    while True:
        match = mentions._PATTERN.search(text, pos)
        if match is None:
            break
        raw_label, markdown_uri, bare_uri = match.groups()
        sid = uri.decode(markdown_uri if markdown_uri is not None else bare_uri)
        label = mentions.unescape_label(raw_label) if markdown_uri is not None else sid
        found.append((sid, label))
        out.append(text[pos : match.start()])
        out.append("@" + label)
        pos = match.end()
    out.append(text[pos:])
    return "".join(out), found


def canonical(s: str) -> str:
    """D-1: the string of *s*'s code points (pairs combined, lone surrogates kept)."""
    return "".join(chr(c) for c in code_points(s))


def base64url_decode_strict(payload: str) -> bytes:
    """Decode *payload* one sextet at a time; ``ValueError`` unless re-encoding it gives
    *payload* back (the definition of canonical, D-6)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    bits = ""
    for ch in payload:
        if ch not in alphabet:
            raise ValueError(f"not in the base64url alphabet: {ch!r}")
        bits += f"{alphabet.index(ch):06b}"
    if len(payload) % 4 == 1 or bits[len(bits) // 8 * 8 :].strip("0"):
        raise ValueError("not canonical")
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits) // 8 * 8, 8))


def unquote_bytes(data: bytes) -> str:
    """The string *s* with ``quote(s)`` spelled exactly *data*, found by parsing *data* as
    any JSON text and spelling the result back; ``ValueError`` when there is none."""
    import json

    value = json.loads(data.decode("utf-8"))
    if not isinstance(value, str) or quote(value).encode("utf-8") != data:
        raise ValueError("not the JSON.stringify spelling of a string")
    return canonical(value)
