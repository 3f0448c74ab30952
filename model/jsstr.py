"""JavaScript string and JSON semantics, in one place.

Session ids, labels and texts are JavaScript strings: sequences of UTF-16 code units in
which a lone surrogate is legal.  The model represents one as a Python ``str`` in
*canonical form*: every valid surrogate pair is combined into its astral code point and
every lone surrogate stays a single code point.  Two strings are then equal exactly when
their UTF-16 code units are equal, and Python's code-point regexes behave like JavaScript
``/u`` regexes (JS-STR decisions D-1..D-4 in spec/decisions/foundation.toml).

Everything byte-exact in the project goes through this module: ``JSON.stringify``
(ES2019 well-formed output), Node's ``Buffer.byteLength``, ``TextEncoder`` and unpadded
base64url.
"""

from __future__ import annotations

import binascii
import codecs
import json
import math
import operator
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from json.encoder import encode_basestring as _encode_basestring
from types import ModuleType
from typing import Any, Final, TypeAlias

import orjson
import pybase64

from dsh_conformance.model.errors import DshError, ErrorCode

#: A JSON value as the model sees it (``dict`` keys are JS strings in insertion order;
#: ``stringify`` writes them in JavaScript property order, array indices first).
JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"

_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _accelerator() -> ModuleType | None:
    """The optional C twin of this module's hottest scans (model/_jsfast.c), unless it is
    not built or ``DSH_CONFORMANCE_PURE`` asks for the pure-Python forms below."""
    if os.environ.get("DSH_CONFORMANCE_PURE", "") not in ("", "0"):
        return None
    try:
        from dsh_conformance.model import _jsfast
    except ImportError:
        return None
    return _jsfast


#: ``None`` when running on the pure-Python definitions (tests set it to compare both).
_FAST: Any = _accelerator()


def _text(s: object, fn: str) -> str:
    """*s* as an exact ``str`` for *fn*, or the accelerator's ``TypeError``: both paths
    refuse the same arguments with the same error (D-207), and read a ``str`` subclass as
    its ``str`` value, never through methods it overrides."""
    if type(s) is str:
        return s
    if isinstance(s, str):
        return str.__str__(s)
    raise TypeError(f"{fn}() needs a str, not {type(s).__name__}")


def _find_index(value: object, none: int | None) -> int:
    """An index argument of ``find``, as the accelerator reads it (D-207)."""
    if value is None and none is not None:
        return none
    if not hasattr(type(value), "__index__"):
        raise TypeError(f"find() needs integer start and end, not {type(value).__name__}")
    index = operator.index(value)  # type: ignore[arg-type]
    if index < 0:
        raise ValueError("find() needs 0 <= start and 0 <= end")
    return index


#: JavaScript ``\s`` under the ``u`` flag (ECMAScript WhiteSpace + LineTerminator).  Python's
#: ``\s`` differs: it adds U+001C..U+001F and U+0085 and lacks U+FEFF.
JS_WHITESPACE: Final = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
#: The four JavaScript line terminators: what ``.`` (without ``s``) does not match.
JS_LINE_TERMINATORS: Final = "\n\r\u2028\u2029"


def canonical(s: str) -> str:
    """Return *s* with surrogate pairs combined and lone surrogates kept (requirement: D-1).

    Strings from Python literals such as ``"\\ud83d\\ude00"`` hold two code points that
    JavaScript sees as one character; after this they compare equal to ``"😀"``.  One
    strict encode proves the common case (no pair to combine) at C speed: its error
    handler sees each surrogate and stops at the first high one followed by a low one.
    """
    if type(s) is not str:
        s = _text(s, "canonical")
    if s.isascii():
        return s
    try:
        if _FAST is not None:
            if _FAST.surrogates(s) == 2:
                raise _SurrogatePair
        else:
            s.encode(_wide_codec(s), _PAIR_CHECK)
    except _SurrogatePair:
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return s


def has_surrogate(s: str) -> bool:
    """Whether *s* holds any surrogate code point (C-speed: strict UTF-16/32 refuse them).

    A strict encoder is the fastest exact scan CPython offers; UTF-16 is a near copy of a
    string stored in 1 or 2 bytes per character, UTF-32 of one stored in 4 (which
    ``sys.getsizeof`` reveals; either codec gives the same answer, only speed differs).
    """
    if type(s) is not str:
        s = _text(s, "has_surrogate")
    if s.isascii():
        return False
    if _FAST is not None:
        return bool(_FAST.surrogates(s))
    try:
        s.encode(_wide_codec(s))
    except UnicodeEncodeError:
        return True
    return False


def _wide_codec(s: str) -> str:
    """The strict codec that copies *s* fastest: UTF-32 for strings CPython stores in 4
    bytes per character, UTF-16 otherwise."""
    return "utf-32-le" if sys.getsizeof(s) >= 4 * len(s) + 72 else "utf-16-le"


class _SurrogatePair(Exception):
    """Raised through ``str.encode`` by ``_PAIR_CHECK`` at the first high+low pair."""


def _check_pairs(exc: UnicodeError) -> tuple[bytes, int]:
    """Error handler: skip lone surrogates, stop at a pair (``canonical``'s one pass)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text, end = exc.object, exc.end
    for i in range(exc.start, end):
        if text[i] < "\udc00" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff":
            raise _SurrogatePair
    return b"", end


def _escape_surrogates(exc: UnicodeError) -> tuple[bytes, int]:
    """Error handler for UTF-8: a high+low pair as its astral character, a lone surrogate as
    the ``JSON.stringify`` escape ``\\udxxx`` (the strict encoder hands over each run)."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    run = exc.object[exc.start : exc.end]
    out = []
    i = 0
    while i < len(run):
        unit = run[i]
        if unit < "\udc00" and i + 1 < len(run) and run[i + 1] >= "\udc00":
            astral = 0x10000 + ((ord(unit) - 0xD800) << 10) + (ord(run[i + 1]) - 0xDC00)
            out.append(chr(astral).encode("utf-8"))
            i += 2
        else:
            out.append(b"\\u%04x" % ord(unit))
            i += 1
    return b"".join(out), exc.end


_PAIR_CHECK: Final = "dsh-conformance.pair-check"
_ESCAPE_SURROGATES: Final = "dsh-conformance.escape-surrogates"
codecs.register_error(_PAIR_CHECK, _check_pairs)
codecs.register_error(_ESCAPE_SURROGATES, _escape_surrogates)


def to_code_units(s: str) -> list[int]:
    """The UTF-16 code units of *s*, as JavaScript's ``charCodeAt`` would list them."""
    data = s.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


def from_code_units(units: Iterable[int]) -> str:
    """Build the canonical string for a sequence of UTF-16 code units."""
    data = bytearray()
    for unit in units:
        if not 0 <= unit <= 0xFFFF:
            raise DshError(ErrorCode.INVALID_ARGUMENT, f"not a UTF-16 code unit: {unit!r}")
        data += bytes((unit & 0xFF, unit >> 8))
    return bytes(data).decode("utf-16-le", "surrogatepass")


def find(text: str, needle: str, start: int = 0, end: int | None = None) -> int:
    """``text.find(needle, start, end)`` for ``0 <= start`` and ``0 <= end``: the
    accelerator's vectorised search when built (CPython's own is about 1 ns a character
    on prose, where the needle's letters are common), else ``str.find`` itself.  A
    negative index is a ``ValueError`` (``str.find`` would count it from the end)."""
    if type(text) is not str or type(needle) is not str:
        text, needle = _text(text, "find"), _text(needle, "find")
    if type(start) is not int or start < 0:
        start = _find_index(start, None)
    stop = len(text) if end is None else end
    if type(stop) is not int or stop < 0:
        stop = _find_index(stop, len(text))
    if _FAST is not None and len(needle) > 1 and stop - start > _LONG_SEARCH:
        return int(_FAST.find(text, needle, start, stop))
    return text.find(needle, start, stop)


#: Below this many characters to search, ``str.find``'s lower call cost wins.
_LONG_SEARCH: Final = 256


def js_length(s: str) -> int:
    """JavaScript ``s.length``: the number of UTF-16 code units."""
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def utf8_length(s: str) -> int:
    """Node ``Buffer.byteLength(s, "utf8")``: a lone surrogate counts 3 (as U+FFFD would)."""
    if type(s) is not str:
        s = _text(s, "utf8_length")
    if _FAST is not None:
        return int(_FAST.utf8_length(s))
    return len(canonical(s).encode("utf-8", "surrogatepass"))


def canonical_utf8_length(s: str) -> tuple[str, int]:
    """``(canonical(s), utf8_length(s))`` in one pass where possible: a strict UTF-8
    encoding both proves *s* has no surrogate and counts its bytes (projection needs both
    for every message it keeps)."""
    if type(s) is not str:
        s = _text(s, "canonical_length")
    if _FAST is not None:
        length = _FAST.canonical_length(s)
        if length >= 0:
            return s, length
        s = canonical(s)
        return s, int(_FAST.utf8_length(s))
    if s.isascii():
        return s, len(s)
    try:
        return s, len(s.encode("utf-8"))
    except UnicodeEncodeError:
        s = canonical(s)
        return s, utf8_length(s)


def utf8_encode(s: str) -> bytes:
    """``TextEncoder.encode``: lone surrogates become U+FFFD (EF BF BD)."""
    return _LONE_SURROGATE.sub("\ufffd", s).encode("utf-8")


def utf8_decode(data: bytes) -> str:
    """``TextDecoder.decode`` (non-fatal): invalid sequences become U+FFFD."""
    return data.decode("utf-8", "replace")


#: Below this many bytes binascii's per-call cost beats pybase64's SIMD (which also needs
#: a second pass to prove a payload canonical); above it the SIMD codec wins by 5x.
_SHORT_BASE64: Final = 96
_TO_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")
#: base64url -> standard alphabet; '+', '/' and '=' map to NUL, which strict decoding refuses.
_FROM_URLSAFE: Final = bytes.maketrans(b"-_+/=", b"+/\x00\x00\x00")
#: ``=`` padding that makes an unpadded payload decodable, by its length mod 4 (a
#: remainder of 1 is an impossible length), and the mask of the unused bits of its last
#: character that a canonical payload leaves zero.
_B64_PADDING: Final = (b"", None, b"==", b"=")
_B64_LAST_MASK: Final = (0, 0, 0x0F, 0x03)
_B64_VALUE: Final = {
    c: i for i, c in enumerate(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
}


def base64url_encode(data: bytes) -> str:
    """Node ``Buffer.toString("base64url")``: URL-safe alphabet, no ``=`` padding."""
    if len(data) < _SHORT_BASE64:
        return binascii.b2a_base64(data, newline=False).translate(_TO_URLSAFE, b"=").decode()
    return pybase64.b64encode_as_string(data, b"-_").rstrip("=")


def base64url_decode_strict(payload: str) -> bytes:
    """Strictly decode unpadded base64url; raise ``ValueError`` on anything non-canonical.

    Canonical means ``base64url_encode`` of the result gives *payload* back: only the
    alphabet, no padding, no impossible length, zero unused trailing bits.
    """
    if len(payload) * 3 // 4 < _SHORT_BASE64:
        return _decode_short(payload)
    return _decode_simd(payload)


def _decode_short(payload: str) -> bytes:
    """The strict decode by binascii: URL-safe letters mapped to the standard ones and
    everything else to NUL, which strict mode refuses; the trailing bits checked apart."""
    padding = _B64_PADDING[len(payload) % 4]
    if padding is None:
        raise ValueError("impossible base64 length")
    data = payload.encode("ascii")  # UnicodeEncodeError is a ValueError
    if padding and _B64_VALUE.get(data[-1], 0) & _B64_LAST_MASK[len(data) % 4]:
        raise ValueError("non-zero trailing bits")
    return binascii.a2b_base64(data.translate(_FROM_URLSAFE) + padding, strict_mode=True)


def _decode_simd(payload: str) -> bytes:
    """The strict decode by pybase64, proven canonical by encoding the result back (the
    decoder accepts ``+``/``/`` beside ``-``/``_``, and warns about them: refused first)."""
    padding = _B64_PADDING[len(payload) % 4]
    if padding is None:
        raise ValueError("impossible base64 length")
    if "+" in payload or "/" in payload:
        raise ValueError("not base64url: standard-alphabet character")
    try:
        data = pybase64.b64decode(payload.encode("ascii") + padding, b"-_", True)
    except TypeError as exc:
        raise ValueError(f"not base64url: {exc}") from exc
    if pybase64.b64encode_as_string(data, b"-_").rstrip("=") != payload:
        raise ValueError("not canonical base64url")
    return data


def quote_base64url(s: str) -> str:
    """``base64url_encode(quote_bytes(s))``: a ``dsh-session:`` URI's payload (D-5)."""
    if type(s) is not str:
        s = _text(s, "quote_base64url")
    if _FAST is not None:
        return str(_FAST.quote_base64url(s))
    return base64url_encode(quote_bytes(s))


def unquote_base64url(payload: str) -> str:
    """The strict inverse of ``quote_base64url``: ``ValueError`` unless *payload* is
    exactly its spelling of some string (D-6)."""
    if type(payload) is not str:
        payload = _text(payload, "unquote_base64url")
    if _FAST is not None:
        return str(_FAST.unquote_base64url(payload))
    try:
        return unquote_bytes(base64url_decode_strict(payload))
    except ValueError:  # binascii's, orjson's and our own: one error, as the accelerator's
        raise ValueError(_NOT_CANONICAL) from None


_NOT_CANONICAL: Final = "not the base64url of a JSON.stringify string"


# --- JSON.stringify -------------------------------------------------------------------------


class Undefined:
    """JavaScript ``undefined``: a value ``JSON.stringify`` cannot serialize at top level."""

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"


UNDEFINED: Final = Undefined()


def quote(s: str) -> str:
    """``JSON.stringify`` of one string (ES2019 well-formed: lone surrogates as ``\\udxxx``)."""
    return quote_bytes(s).decode("utf-8")


def quote_bytes(s: str) -> bytes:
    """UTF-8 bytes of ``quote(s)``.

    orjson spells every well-formed string exactly as ``JSON.stringify`` does (checked
    over all of Unicode in tests/test_jsstr.py) and refuses surrogates.  A string that
    holds any takes the standard library's C escaper, which spells everything else the
    same way and leaves surrogates raw; the strict UTF-8 encoder then hands each run of
    surrogates to ``_escape_surrogates`` (lone ones escaped, a non-canonical pair
    written as its character).
    """
    try:
        return orjson.dumps(s)
    except TypeError:
        return _encode_basestring(s).encode("utf-8", _ESCAPE_SURROGATES)


def unquote_bytes(data: bytes) -> str:
    """The string whose ``quote_bytes`` is *data*; ``ValueError`` when there is none.

    The strict inverse of ``JSON.stringify`` on strings: *data* must be exactly the one
    spelling ``quote_bytes`` gives (D-6 needs no more).  orjson reads and re-spells
    everything but an escaped lone surrogate, which it refuses; *data* holding one of
    those (always ``\\udxxx`` in the canonical spelling) is read piece by piece.
    """
    # orjson's refusal costs more than a search on a long literal (it works out the line
    # and column of the escape), less than one on a short literal.
    if len(data) > _SHORT_LITERAL:
        at = data.find(b"\\ud")
        if at >= 0:
            return _unquote_around_surrogates(data, at)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        at = data.find(b"\\ud")
        if at < 0:
            raise
        return _unquote_around_surrogates(data, at)
    if type(value) is not str or orjson.dumps(value) != data:
        raise ValueError("not the JSON.stringify spelling of a string")
    return value


_SHORT_LITERAL: Final = 64


def _unquote_around_surrogates(data: bytes, at: int) -> str:
    """``unquote_bytes`` of a literal with ``\\ud`` at *at*: each escaped lone surrogate
    splits the literal, and every piece between must itself be canonical."""
    if len(data) < 2 or data[0] != 0x22 or data[-1] != 0x22:
        raise ValueError("not a JSON string literal")
    pieces: list[str] = []
    start = 1
    high = False  # the last piece was an escaped high surrogate
    while at >= 0:
        before = at
        while data[before - 1] == 0x5C:  # data[0] is the quote, so this stops
            before -= 1
        if (at - before) % 2:  # the backslash is itself escaped: literal text
            at = data.find(b"\\ud", at + 1)
            continue
        unit = int(data[at + 2 : at + 6], 16)
        if not 0xD800 <= unit <= 0xDFFF or data[at : at + 6] != b"\\u%04x" % unit:
            raise ValueError("not the JSON.stringify spelling of a string")
        _append_piece(pieces, data[start:at])
        if high and start == at and unit >= 0xDC00:
            raise ValueError("an escaped surrogate pair is not canonical")
        pieces.append(chr(unit))
        high = unit < 0xDC00
        start = at + 6
        at = data.find(b"\\ud", start)
    _append_piece(pieces, data[start:-1])
    return "".join(pieces)


def _append_piece(pieces: list[str], body: bytes) -> None:
    """Read a literal's body between escaped surrogates, proving it canonical."""
    if body:
        literal = b'"' + body + b'"'
        value = orjson.loads(literal)
        if orjson.dumps(value) != literal:
            raise ValueError("not the JSON.stringify spelling of a string")
        pieces.append(value)


def number_to_string(x: float | int) -> str:
    """ECMAScript ``Number::toString`` for a finite number (shortest round-trip digits)."""
    if isinstance(x, bool):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "a boolean is not a number")
    if isinstance(x, int):
        if abs(x) > 2**53:
            x = float(x)
        else:
            return str(x)
    if x == 0:
        return "0"
    if x < 0:
        return "-" + number_to_string(-x)
    digits, exponent = _shortest_digits(x)
    k = len(digits)
    n = exponent + k  # position of the decimal point relative to the digit string
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{sign}{abs(e)}"


def _shortest_digits(x: float) -> tuple[str, int]:
    """Return (digits, exponent) with x == int(digits) * 10**exponent, digits minimal."""
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    if frac == "0":
        frac = ""
    digits = (whole + frac).lstrip("0")
    exponent -= len(frac)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped or "0", exponent


def is_array_index(key: str) -> bool:
    """Whether *key* is an ECMAScript array index: the canonical decimal spelling of an
    integer in 0 .. 2**32 - 2 (``"0"``, ``"7"``, ``"4294967294"``; not ``"01"``, ``"-1"``,
    ``"4294967295"``).  Objects list such keys first, in ascending numeric order (D-12)."""
    return (
        0 < len(key) <= 10
        and key.isascii()
        and key.isdigit()
        and (key == "0" or key[0] != "0")
        and int(key) <= _MAX_ARRAY_INDEX
    )


_MAX_ARRAY_INDEX: Final = 2**32 - 2


def property_order(obj: Mapping[str, object]) -> list[str]:
    """The order in which JavaScript enumerates the own string keys of an object built
    from *obj* (``OrdinaryOwnPropertyKeys``): array indices ascending, then the other keys
    in insertion order.  ``JSON.stringify`` and ``Object.keys`` both follow it."""
    keys = list(obj)
    indices = [k for k in keys if k[:1].isdigit() and is_array_index(k)]
    if not indices:
        return keys
    indices.sort(key=int)
    return indices + [k for k in keys if not (k[:1].isdigit() and is_array_index(k))]


def stringify(value: object) -> str:
    """``JSON.stringify(value)`` with no indentation, byte-for-byte as Node prints it.

    Object keys come in JavaScript's property order (array-index keys such as ``"0"``
    first, ascending, then insertion order: ``property_order``); ``NaN``/``±Infinity``
    serialize as ``null`` (as in JS); ``-0.0`` as ``0``.  Values JSON cannot express
    (``UNDEFINED`` at top level, sets, bytes, non-string keys, cycles) raise
    ``DshError(JSON_NOT_SERIALIZABLE)``.
    """
    if _FAST.plain(value) if _FAST is not None else _plain(value, 0):
        try:
            return orjson.dumps(value).decode("utf-8")
        except TypeError:  # a lone surrogate: all orjson refuses of a plain value
            return _plain_with_surrogates(value).decode("utf-8")
    parts: list[str] = []
    _write(value, parts, set())
    return "".join(parts)


def stringify_bytes(value: object, suffix: bytes = b"") -> bytes:
    """UTF-8 bytes of ``stringify(value)`` followed by *suffix* (one copy fewer than
    encoding ``stringify``'s text: what the protocol writes)."""
    if _FAST.plain(value) if _FAST is not None else _plain(value, 0):
        try:
            if suffix == b"\n":  # a protocol line: orjson appends it without a copy
                return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
            return orjson.dumps(value) + suffix
        except TypeError:  # a lone surrogate: all orjson refuses of a plain value
            return _plain_with_surrogates(value) + suffix
    parts: list[str] = []
    _write(value, parts, set())
    return "".join(parts).encode("utf-8") + suffix


#: The standard library's C encoder, spelled as ``JSON.stringify`` spells a plain value
#: (no spaces, non-ASCII raw, the same escapes as ``quote_bytes``'s): only surrogates differ.
_PLAIN_ENCODER: Final = json.JSONEncoder(
    ensure_ascii=False, check_circular=False, allow_nan=False, separators=(",", ":")
)


def _plain_with_surrogates(value: object) -> bytes:
    """``stringify_bytes`` of a plain value orjson refuses, which only a lone surrogate (or
    a pair held as two code points) makes it do (D-498).  The standard library's C encoder
    writes every plain value as ``JSON.stringify`` does but leaves surrogates raw, and they
    can only stand inside string literals (everything around them is ASCII); the strict
    UTF-8 encoder hands each run of them to ``_escape_surrogates``, as ``quote_bytes`` does
    for one string."""
    return _PLAIN_ENCODER.encode(value).encode("utf-8", _ESCAPE_SURROGATES)


def quick_plain(value: object) -> bool:
    """Whether orjson and ``JSON.stringify`` spell *value* alike, when that is cheap to
    know: the accelerator's answer to ``_plain``, or ``False`` without it (a caller then
    takes its exact path).  A plain value holds no float, which is how the wire reader
    knows orjson read no integer beyond 64 bits (it reads those as floats)."""
    return _FAST is not None and bool(_FAST.plain(value))


#: Nesting deeper than this goes to the exact path (which also detects cycles).
_PLAIN_DEPTH: Final = 64
_SAFE_INT: Final = 2**53


def _plain(value: object, depth: int) -> bool:
    """Whether orjson writes *value* exactly as ``JSON.stringify`` does: only ``dict``,
    ``list``, ``tuple``, ``str``, ``bool``, ``None`` and safe integers, and array-index
    keys only where ``JSON.stringify`` writes them too: before every other key of their
    object, ascending (``property_order`` is then the insertion order orjson writes,
    D-497).  Floats are left to ``number_to_string``: orjson spells ``1e+21`` and ``1.0``
    differently.  Strings are not scanned here: orjson refuses a lone surrogate, which
    ``_plain_with_surrogates`` then writes."""
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return -_SAFE_INT <= value <= _SAFE_INT  # type: ignore[operator]
    if depth > _PLAIN_DEPTH:
        return False
    if kind is dict:
        last = -1  # the last array index seen
        ordinary = False  # a key that is no array index was seen
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                return False
            if not (key[:1].isdigit() and is_array_index(key)):
                ordinary = True
            elif ordinary or int(key) <= last:
                return False  # JSON.stringify would move this key: orjson keeps it here
            else:
                last = int(key)
            item_kind = type(item)
            if item_kind is not str and not _plain(item, depth + 1):
                return False
        return True
    if kind is list or kind is tuple:
        # A loop, not all(): the generator costs more than the check on small arrays.
        for item in value:  # type: ignore[attr-defined]  # noqa: SIM110
            if type(item) is not str and not _plain(item, depth + 1):
                return False
        return True
    return False


def _write(value: object, out: list[str], active: set[int]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(quote(value))
    elif isinstance(value, int):
        out.append(number_to_string(value))
    elif isinstance(value, float):
        out.append(number_to_string(value) if math.isfinite(value) else "null")
    elif isinstance(value, Mapping):
        if id(value) in active:
            raise DshError(ErrorCode.JSON_NOT_SERIALIZABLE, "cyclic object value")
        active.add(id(value))
        out.append("{")
        first = True
        for key in value:
            if not isinstance(key, str):
                raise DshError(
                    ErrorCode.JSON_NOT_SERIALIZABLE, f"object key {key!r} is not a string"
                )
        for key in property_order(value):
            item = value[key]
            if item is UNDEFINED:
                continue  # JSON.stringify omits undefined-valued properties
            if not first:
                out.append(",")
            first = False
            out.append(quote(key))
            out.append(":")
            _write(item, out, active)
        out.append("}")
        active.discard(id(value))
    elif isinstance(value, list | tuple):
        if id(value) in active:
            raise DshError(ErrorCode.JSON_NOT_SERIALIZABLE, "cyclic object value")
        active.add(id(value))
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            if item is UNDEFINED:
                out.append("null")  # JSON.stringify writes undefined array slots as null
            else:
                _write(item, out, active)
        out.append("]")
        active.discard(id(value))
    else:
        raise DshError(
            ErrorCode.JSON_NOT_SERIALIZABLE,
            f"a value of type {type(value).__name__} is not JSON-serializable",
        )


def parse(text: str) -> JsonValue:
    """``JSON.parse``: strict JSON text to a canonical JSON value.

    Escaped surrogate pairs combine, lone-surrogate escapes stay lone; ``NaN`` and
    ``Infinity`` literals (which Python's parser would accept) are rejected.
    """

    def _reject(token: str) -> float:
        raise ValueError(f"{token} is not JSON")

    value: JsonValue = json.loads(text, parse_constant=_reject, object_pairs_hook=_pairs)
    return canonical_value(value)


def parse_bytes(data: bytes) -> JsonValue:
    """``parse`` of UTF-8 *data* (``ValueError`` unless it is JSON): orjson reads it when
    what it gives is plain, the exact parser otherwise."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass  # lone-surrogate escapes, non-finite numbers, garbage: the exact parser decides
    else:
        # orjson refuses lone-surrogate escapes, so its strings are canonical; it reads an
        # integer beyond 64 bits as a float, which no plain value holds.
        if quick_plain(value):
            return value  # type: ignore[no-any-return]
    return parse(data.decode("utf-8"))  # UnicodeDecodeError is a ValueError


def _pairs(items: Sequence[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    # JSON.parse keeps the last duplicate key, in the position of its first appearance.
    return dict(items)


def canonical_value(value: JsonValue) -> JsonValue:
    """Canonicalize every string (keys included) inside a JSON value."""
    if isinstance(value, str):
        return canonical(value)
    if isinstance(value, list):
        return [canonical_value(v) for v in value]
    if isinstance(value, dict):
        return {canonical(k): canonical_value(v) for k, v in value.items()}
    return value


def json_equal(a: object, b: object) -> bool:
    """JSON equality as JavaScript sees it: key order ignored, 1 == 1.0, bools not numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return canonical(a) == canonical(b)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a is None and b is None
