"""The one exception type the host answers as a typed protocol error."""

from __future__ import annotations


class HostError(Exception):
    """A failure with a stable code; the message is for people only."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
