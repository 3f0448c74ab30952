"""dsh-session: URIs, @[label](uri) mentions and terminal-safe display strings."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Any

from tests.independent_host.errors import HostError
from tests.independent_host.jsvalue import normalize, stringify

SCHEME = "dsh-session:"
INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
_PAYLOAD = re.compile(r"[A-Za-z0-9_-]*")
_ALNUM = re.compile(r"[A-Za-z0-9]")
# JavaScript's \s: what ends the target of an explicit mention.
_JS_SPACE = frozenset(
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def encode_uri(session_id: str) -> str:
    """The canonical URI: base64url, unpadded, of JSON.stringify(id) as UTF-8."""
    raw = stringify(session_id).encode("utf-8")
    return SCHEME + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_uri(uri: Any) -> str:
    """Accept exactly what encode_uri produces for some id; reject everything else."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        raise HostError(INVALID, "not a dsh-session: URI")
    payload = uri[len(SCHEME) :]
    if not payload or _PAYLOAD.fullmatch(payload) is None:
        raise HostError(INVALID, "the URI payload is not unpadded base64url")
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        value = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, RecursionError) as exc:
        raise HostError(INVALID, "the URI payload does not decode to JSON") from exc
    if not isinstance(value, str):
        raise HostError(INVALID, "the URI payload is not a JSON string")
    value = normalize(value)
    if encode_uri(value) != uri:
        raise HostError(INVALID, "the URI is not in canonical form")
    return value


def escape_label(label: str) -> str:
    """Backslash-escape what would end or confuse a label: backslash and brackets."""
    return re.sub(r"([\\\[\]])", r"\\\1", label)


def format_mention(session_id: str, label: str | None) -> str:
    text = session_id if label is None else label
    return "@[" + escape_label(text) + "](" + encode_uri(session_id) + ")"


def _explicit(text: str, start: int) -> tuple[int, str, str] | None:
    """Match @[label](target) at start: (end, label, target), or None if it is not one."""
    i, label = start + 2, []
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            label.append(text[i + 1])
            i += 2
            continue
        if char == "]":
            break
        label.append(char)
        i += 1
    else:
        return None
    if not text.startswith("](", i):
        return None
    j = i + 2
    while j < len(text) and text[j] != ")" and text[j] not in _JS_SPACE:
        j += 1
    if j >= len(text) or text[j] != ")":
        return None
    return j + 1, "".join(label), text[i + 2 : j]


def parse_mentions(text: str) -> dict[str, Any]:
    """Replace each mention by '@' + label and list the references in order of appearance."""
    text = normalize(text)
    out: list[str] = []
    refs: list[dict[str, str]] = []
    i = 0
    while i < len(text):
        if text.startswith("@[", i):
            found = _explicit(text, i)
            if found is not None and found[2].startswith(SCHEME):
                end, label, target = found
                session_id = decode_uri(target)
                refs.append({"sessionId": session_id, "label": label})
                out.append("@" + label)
                i = end
                continue
        if text.startswith(SCHEME, i):
            match = _PAYLOAD.match(text, i + len(SCHEME))
            payload = match.group(0) if match else ""
            if _ALNUM.search(payload):
                session_id = decode_uri(SCHEME + payload)
                refs.append({"sessionId": session_id, "label": session_id})
                out.append("@" + session_id)
                i += len(SCHEME) + len(payload)
                continue
        out.append(text[i])
        i += 1
    return {"text": "".join(out), "references": refs}


def terminal_safe(text: str) -> str:
    """Spell C0, DEL and C1 controls as \\u{..} so display text cannot drive a terminal."""
    return "".join(
        f"\\u{{{ord(c):x}}}" if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F else c for c in text
    )
