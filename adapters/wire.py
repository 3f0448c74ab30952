"""The adapter protocol's line format (spec/schemas/protocol.json, docs/protocol.md).

Both ends of the pipe use this module: the subprocess transport (harness side) and the
served reference model (adapter side).  A line is one JSON object written with
``JSON.stringify`` semantics, so a lone surrogate travels as the escape ``\\udxxx`` and
every line is valid UTF-8 (decision D-14).  Readers canonicalize strings after parsing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from itertools import repeat
from typing import TYPE_CHECKING, Any, Final

import orjson

from dsh_conformance.adapters.contract import PROTOCOL_VERSION, AdapterFault
from dsh_conformance.model import jsstr

if TYPE_CHECKING:
    from dsh_conformance.spec.compiled import Compiled

#: Schema definitions a message can be checked against (``#/$defs/<name>``).
MESSAGE_KINDS: Final = (
    "handshake-request",
    "handshake-response",
    "request",
    "result",
    "error",
    "reply",
)

#: Stable codes of the protocol faults the transport can name (``AdapterFault.code``).
REPLY_OUT_OF_ORDER: Final = "DSH_REPLY_OUT_OF_ORDER"
REPLY_WRONG_ID: Final = "DSH_REPLY_WRONG_ID"
LINE_TOO_DEEP: Final = "DSH_LINE_TOO_DEEP"

#: The reply size cap (bytes in one line) of the subprocess transport, by default.
DEFAULT_MAX_REPLY_BYTES: Final = 16 * 1024 * 1024


#: Lines up to this size try orjson first (a longer line is scanned once, by the exact path).
_FAST_LINE: Final = 1 << 16
#: orjson reads an integer beyond 64 bits as a float; Python's json keeps it exact.
_LONG_DIGITS: Final = re.compile(rb"[0-9]{16}")


#: orjson's option for a protocol line: the value, then a newline.
_LINE: Final = orjson.OPT_APPEND_NEWLINE


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def encode(message: Mapping[str, Any]) -> bytes:
    """One protocol line (``JSON.stringify`` + ``\\n``) as UTF-8 bytes."""
    return jsstr.stringify_bytes(message, b"\n")


def encode_all(messages: Sequence[Mapping[str, Any]]) -> list[bytes]:
    """``[encode(m) for m in messages]``, with one plainness check for them all: orjson
    writes the lot when it spells every one as ``JSON.stringify`` does."""
    if jsstr.quick_plain(messages if type(messages) is list else list(messages)):
        try:
            return list(map(orjson.dumps, messages, repeat(None), repeat(_LINE)))
        except TypeError:  # a lone surrogate somewhere: JSON.stringify escapes it
            pass
    return [encode(message) for message in messages]


def decode(line: bytes) -> dict[str, Any]:
    """Parse one protocol line into a JSON object with canonical strings.

    Raise ``AdapterFault("garbage", …)`` for anything that is not one UTF-8 JSON object.
    """
    if len(line) <= _FAST_LINE:
        try:
            fast = orjson.loads(line)
        except orjson.JSONDecodeError:
            pass  # lone-surrogate escapes, non-finite numbers, garbage: the exact path decides
        else:
            # orjson refuses lone-surrogate escapes and combines escaped pairs, so what it
            # accepts is already canonical.  It reads an integer beyond 64 bits as a float:
            # a value without floats cannot hold one, else the line is searched for one.
            plain = jsstr._FAST is not None and jsstr._FAST.plain(fast)  # jsstr.quick_plain
            if type(fast) is dict and (plain or not _LONG_DIGITS.search(line)):
                return fast
    try:
        return _decode_exact(line)
    except RecursionError:
        # A line nested deeper than the interpreter's recursion limit (orjson refuses
        # past 1024 levels, the exact parser past about 1000 frames): a protocol fault,
        # never a RecursionError that ends the served model or escapes the harness.
        raise AdapterFault(
            "protocol", f"line nested too deeply to read: {preview(line)}", LINE_TOO_DEEP
        ) from None


def _decode_exact(line: bytes) -> dict[str, Any]:
    """``decode`` by the standard library's parser (exact for every JSON text)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AdapterFault("garbage", f"reply is not UTF-8: {preview(line)}") from exc
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise AdapterFault("garbage", f"reply is not JSON: {preview(line)}") from exc
    if not isinstance(value, dict):
        raise AdapterFault("garbage", f"reply is not a JSON object: {preview(line)}")
    if "\\u" in text or "\\U" in text:
        # Only escaped surrogates can be non-canonical; skip the walk for everything else.
        value = jsstr.canonical_value(value)
        assert isinstance(value, dict)
    return value


#: C0 and C1 controls, DEL, lone surrogates and bidirectional overrides: text that could
#: drive a terminal or reorder what a reader sees.  Newline and tab are handled apart.
_UNPRINTABLE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, keep_newlines: bool = True) -> str:
    """*text* with every control, escape and bidi character spelled as ``\\xNN``.

    Adapter text (messages, stderr, names) passes through this before it reaches a
    person, so an implementation cannot move the cursor, recolour or retitle a terminal.
    """
    out = _UNPRINTABLE.sub(_escape_char, text)
    if not keep_newlines:
        out = out.replace("\n", "\\n").replace("\t", "\\t")
    return out


def preview(data: bytes, limit: int = 120) -> str:
    """A short, printable rendering of raw bytes for messages (never raw control codes)."""
    text = printable(data[:limit].decode("utf-8", "replace"), keep_newlines=False)
    return f'"{text}"' + ("…" if len(data) > limit else "")


def request(id: str | int, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
    # A copy only when args is not a dict already: the message is encoded at once.
    return {"id": id, "op": op, "args": args if type(args) is dict else dict(args)}


def handshake_request(id: str | int = 0, protocol: int = PROTOCOL_VERSION) -> dict[str, Any]:
    """The handshake offering *protocol* (the newest first, D-291)."""
    return request(id, "handshake", {"protocol": protocol})


def result(id: Any, value: Any) -> dict[str, Any]:
    return {"id": id, "result": value}


def error(id: Any, code: str, message: str) -> dict[str, Any]:
    return {"id": id, "error": {"code": code, "message": message}}


@cache
def _validator(kind: str) -> Compiled:
    from dsh_conformance.spec import schema
    from dsh_conformance.spec.compiled import Compiled

    defs = schema("protocol.json")["$defs"]
    return Compiled({"$ref": f"#/$defs/{kind}", "$defs": defs})


def problems(kind: str, message: Mapping[str, Any]) -> list[str]:
    """Why *message* is not a valid ``kind`` message (empty when it is)."""
    if kind not in MESSAGE_KINDS:
        raise ValueError(f"unknown message kind {kind!r}")
    errors = _validator(kind).iter_errors(dict(message))
    return sorted(
        f"{'/'.join(map(str, e.absolute_path)) or '(message)'}: {e.message}" for e in errors
    )


def check(kind: str, message: Mapping[str, Any]) -> None:
    """Raise ``AdapterFault("protocol", …)`` when *message* is not a valid ``kind``."""
    found = problems(kind, message)
    if found:
        raise AdapterFault("protocol", f"invalid {kind} message: " + "; ".join(found[:3]))
