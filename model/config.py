"""Session-reference configuration: count limit, per-source byte cap, candidate limit.

Seed 000: "a configurable limit with a hard maximum of three references" and "independently
capped at 65,536 UTF-8 bytes by default".  Validation follows upstream's ``config.ts``
(D-41): each value defaults when absent or null, must be a positive safe integer, and
``maxReferences`` must not exceed 3; anything else is INVALID_CONFIG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.retention import DEFAULT_MAX_REFERENCE_BYTES
from dsh_conformance.model.session import is_safe_int

#: The hard maximum number of references per message (PREP-003).
MAX_REFERENCES: Final = 3
DEFAULT_CANDIDATE_LIMIT: Final = 50

_FIELDS: Final = (
    ("maxReferences", MAX_REFERENCES),
    ("candidateLimit", DEFAULT_CANDIDATE_LIMIT),
    ("maxReferenceBytes", DEFAULT_MAX_REFERENCE_BYTES),
)


def _config_error(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_CONFIG, f"session-reference: {message}")


@frozen
class ReferenceConfig:
    """Validated configuration (construct with ``from_json`` to validate)."""

    max_references: int = MAX_REFERENCES
    candidate_limit: int = DEFAULT_CANDIDATE_LIMIT
    max_reference_bytes: int = DEFAULT_MAX_REFERENCE_BYTES

    @classmethod
    def from_json(cls, data: object) -> ReferenceConfig:
        """PREP-003, PREP-012, RET-001, D-41: defaults, positive safe integers, at most three."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise _config_error("config must be an object")
        values: dict[str, Any] = {}
        for name, default in _FIELDS:
            value = data.get(name)
            value = default if value is None else value
            if not is_safe_int(value, minimum=1):
                raise _config_error(f"{name} must be a positive safe integer")
            values[name] = value
        if values["maxReferences"] > MAX_REFERENCES:
            raise _config_error(f"maxReferences must not exceed {MAX_REFERENCES}")
        return cls(values["maxReferences"], values["candidateLimit"], values["maxReferenceBytes"])
