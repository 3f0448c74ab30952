"""``dsh-session:`` URIs: the canonical host-independent session identifier.

URI-* requirements.  ``dsh-session:<base64url(JSON.stringify(sessionId))>``: JSON string
encoding first, so every JavaScript string round-trips without delimiter ambiguity; then
unpadded base64url (D-5).  Decoding is canonical-only: it accepts exactly the strings that
``encode`` produces for some id (D-6), which makes every Node leniency moot.
"""

from __future__ import annotations

import json
from typing import Final

import orjson

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode

SCHEME: Final = "dsh-session:"


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise DshError(
            ErrorCode.INVALID_REFERENCE,
            f"{what} must be a string, got {type(value).__name__}",
            hint="session ids are JavaScript strings",
        )
    return jsstr.canonical(value)


def encode(session_id: str) -> str:
    """URI-001: the canonical URI of *session_id* (any JS string, lone surrogates included)."""
    if not isinstance(session_id, str):
        _require_str(session_id, "session id")
    return SCHEME + jsstr.base64url_encode(jsstr.quote_bytes(session_id))


def _invalid(uri: object) -> DshError:
    shown = jsstr.quote(uri) if isinstance(uri, str) else repr(uri)
    return DshError(ErrorCode.INVALID_REFERENCE, f"invalid session reference URI {shown}")


def decode(uri: str) -> str:
    """URI-002/URI-003: the session id of a canonical URI; anything else is INVALID_REFERENCE."""
    if not isinstance(uri, str):
        raise _invalid(uri)
    uri = jsstr.canonical(uri)
    if not uri.startswith(SCHEME):
        raise _invalid(uri)
    payload = uri[len(SCHEME) :]
    if not payload:
        raise _invalid(uri)
    try:
        raw = jsstr.base64url_decode_strict(payload)
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:  # e.g. lone-surrogate escapes, which orjson refuses
            value = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise _invalid(uri) from exc
    if not isinstance(value, str):
        raise _invalid(uri)
    # Already canonical: the UTF-8 payload holds no raw surrogate, and both parsers combine
    # an escaped high+low pair into one code point (tests/test_uri_fast.py checks it).
    # base64 decoding was already canonical, so comparing the JSON bytes is the full
    # "encode(value) == uri" check (D-6).
    if jsstr.quote_bytes(value) != raw:
        raise _invalid(uri)
    return value
