"""Tag-safe serialization: the JSON that sits between ``<referenced-sessions>`` tags.

SER-* requirements.  ``JSON.stringify`` output with every ``<`` written as the lossless
escape ``\\u003c``: structural JSON never contains ``<``, so only string data changes, the
text parses back to the same value, and no source string can spell a closing tag.
"""

from __future__ import annotations

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode


def stringify_tag_safe(value: object) -> str:
    """SER-001..SER-004: compact JSON with ``<`` escaped; non-JSON input is an error."""
    if value is jsstr.UNDEFINED:
        raise DshError(
            ErrorCode.JSON_NOT_SERIALIZABLE, "session-reference data is not JSON-serializable"
        )
    return jsstr.stringify(value).replace("<", "\\u003c")
