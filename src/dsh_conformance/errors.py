"""Harness errors: a stable code, a message and a hint, rendered Bowtie-style.

Codes are stable (reports, CI logs and docs cite them); messages are for people.
"""

from __future__ import annotations

from typing import Final

#: sysexits-style exit statuses of the CLI.
EX_FAILURES: Final = 1  # the implementation does not conform (or expectations are off)
EX_USAGE: Final = 2
EX_DATAERR: Final = 65  # a record or manifest is malformed
EX_NOINPUT: Final = 66
EX_SOFTWARE: Final = 70  # the adapter is broken (handshake, smoke)
EX_CONFIG: Final = 78


class HarnessError(Exception):
    """A failure of the harness's inputs, with a stable ``code`` and a ``hint``."""

    exit_status: int = EX_CONFIG

    def __init__(self, code: str, message: str, *, hint: str = "", exit_status: int = 0):
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        if exit_status:
            self.exit_status = exit_status

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


class RecordError(HarnessError):
    """A run record that cannot be read (``empty-record``, ``record-not-json``…)."""

    exit_status = EX_DATAERR


class ManifestError(HarnessError):
    """An expectation manifest that cannot be used."""

    exit_status = EX_DATAERR
