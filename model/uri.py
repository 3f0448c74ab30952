"""``dsh-session:`` URIs: the canonical host-independent session identifier.

URI-* requirements.  ``dsh-session:<base64url(JSON.stringify(sessionId))>``: JSON string
encoding first, so every JavaScript string round-trips without delimiter ambiguity; then
unpadded base64url (D-5).  Decoding is canonical-only: it accepts exactly the strings that
``encode`` produces for some id (D-6), which makes every Node leniency moot.
"""

from __future__ import annotations

from typing import Final

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
    if type(session_id) is not str:
        _require_str(session_id, "session id")
    fast = jsstr._FAST  # jsstr.quote_base64url's accelerated form, called directly
    if fast is not None:
        return SCHEME + fast.quote_base64url(session_id)  # type: ignore[no-any-return]
    return SCHEME + jsstr.quote_base64url(session_id)


def _invalid(uri: object) -> DshError:
    shown = jsstr.quote(jsstr.canonical(uri)) if isinstance(uri, str) else repr(uri)
    return DshError(ErrorCode.INVALID_REFERENCE, f"invalid session reference URI {shown}")


def decode(uri: str) -> str:
    """URI-002/URI-003: the session id of a canonical URI; anything else is INVALID_REFERENCE.

    The payload's codec is strict: it accepts only the one spelling ``encode`` writes
    (D-6), layer by layer (``jsstr.unquote_base64url``).
    """
    if type(uri) is not str or not uri.startswith(SCHEME) or len(uri) == len(SCHEME):
        raise _invalid(uri)
    try:
        return jsstr.unquote_base64url(uri[len(SCHEME) :])
    except ValueError as exc:  # orjson's and binascii's errors are ValueErrors
        raise _invalid(uri) from exc
