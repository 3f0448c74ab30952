"""The one error type of the reference model, with stable codes.

Every public model function raises ``DshError`` and nothing else on bad input, so a
conformance test can compare an implementation's failure with the model's by ``code``
alone (messages are for people and may differ between implementations).

The ``SESSION_REFERENCE_*`` codes are the seed's (cross-session note, upstream
``config.ts``); the others are this project's, each recorded in spec/ (ERR-* requirements
and decisions).
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """Stable error codes. Never renumber or rename: reports and manifests cite them."""

    # Seed codes (cross-session references).
    INVALID_CONFIG = "SESSION_REFERENCE_INVALID_CONFIG"
    INVALID_REFERENCE = "SESSION_REFERENCE_INVALID_REFERENCE"
    SELF_REFERENCE = "SESSION_REFERENCE_SELF_REFERENCE"
    TOO_MANY = "SESSION_REFERENCE_TOO_MANY"
    READ_FAILED = "SESSION_REFERENCE_READ_FAILED"
    BUDGET_EXCEEDED = "SESSION_REFERENCE_BUDGET_EXCEEDED"
    CANCELLED = "SESSION_REFERENCE_CANCELLED"

    # Data contracts.
    INVALID_ARGUMENT = "DSH_INVALID_ARGUMENT"
    JSON_NOT_SERIALIZABLE = "DSH_JSON_NOT_SERIALIZABLE"
    INVALID_EVENT = "DSH_INVALID_EVENT"
    SESSION_NOT_FOUND = "DSH_SESSION_NOT_FOUND"

    # Agent / inbox.
    AGENT_DISPOSED = "DSH_AGENT_DISPOSED"
    AGENT_NOT_FOUND = "DSH_AGENT_NOT_FOUND"
    AGENT_INVALID_MESSAGE = "DSH_AGENT_INVALID_MESSAGE"
    AGENT_SCRIPT_EXHAUSTED = "DSH_AGENT_SCRIPT_EXHAUSTED"
    SCENARIO_INVALID = "DSH_SCENARIO_INVALID"
    SCENARIO_UNREACHABLE = "DSH_SCENARIO_UNREACHABLE"
    SCENARIO_UNKNOWN_TOOL = "DSH_SCENARIO_UNKNOWN_TOOL"

    # Side sessions.
    SIDE_INVALID_CAP = "DSH_SIDE_INVALID_CAP"
    SIDE_NOT_A_CHILD = "DSH_SIDE_NOT_A_CHILD"
    SIDE_HANDBACK_OVER_CAP = "DSH_SIDE_HANDBACK_OVER_CAP"
    SIDE_NO_HANDBACK = "DSH_SIDE_NO_HANDBACK"
    SIDE_ALREADY_FRAMED = "DSH_SIDE_ALREADY_FRAMED"
    SIDE_FRAME_NOT_AT_HEAD = "DSH_SIDE_FRAME_NOT_AT_HEAD"

    # Adapter protocol (never raised by the model itself).
    UNSUPPORTED_OPERATION = "DSH_UNSUPPORTED_OPERATION"
    ADAPTER_FAILURE = "DSH_ADAPTER_FAILURE"


class DshError(Exception):
    """A failure with a stable ``code``, a human ``message`` and an optional ``hint``."""

    def __init__(self, code: ErrorCode | str, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = str(code)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text

    def to_json(self) -> dict[str, str]:
        """The adapter-protocol error object: ``{code, message}``."""
        return {"code": self.code, "message": self.message}
