"""Harness errors: a stable code, a message and a hint, rendered Bowtie-style.

Codes are stable (reports, CI logs and docs cite them); messages are for people.
"""

from __future__ import annotations

from typing import Final

#: sysexits-style exit statuses of the CLI (stable: CI scripts branch on them).
EX_OK: Final = 0
EX_FAILURES: Final = 1  # the implementation does not conform (or expectations are off)
EX_USAGE: Final = 2
EX_INCOMPLETE: Final = 3  # the run (or the record) did not finish: aborted, truncated
EX_NOTHING: Final = 5  # no test matched the selection, or none applicable ran (D-175)
EX_DATAERR: Final = 65  # a record or manifest is malformed
EX_NOINPUT: Final = 66  # a record or manifest file does not exist
EX_SOFTWARE: Final = 70  # the adapter is broken (handshake, smoke)
EX_CANTCREAT: Final = 73  # an output (--report-dir, --write-expectations, -o) cannot be written
EX_CONFIG: Final = 78
EX_INTERRUPTED: Final = 130  # a signal (Ctrl-C, SIGTERM, SIGHUP) ended the run

#: The exit-status table, printed by ``--help`` and documented in docs/harness.md.
EXIT_STATUSES: Final = (
    (
        EX_OK,
        "success: the run is complete and its gate passes (within its manifest; with no "
        "manifest, it conforms); diff: no move to worse",
    ),
    (
        EX_FAILURES,
        "the gate fails: unexpected failures or passes, stale expectations, an adapter "
        "that broke, a suite problem; diff: a test moved to worse",
    ),
    (EX_USAGE, "usage: an unknown option or a bad option value"),
    (
        EX_INCOMPLETE,
        "the run was aborted (a worker died) or truncated; summary/diff: the record is "
        "truncated, interrupted, stopped or aborted",
    ),
    (
        EX_NOTHING,
        "run: no test matched the selection, or none of those that did was applicable "
        "(all unsupported); summary: such a record",
    ),
    (EX_DATAERR, "a record or manifest is unreadable: not UTF-8, not JSON, not the schema"),
    (EX_NOINPUT, "a record or manifest file does not exist"),
    (EX_SOFTWARE, "the adapter cannot start or handshake, or fails smoke"),
    (EX_CANTCREAT, "an output (--report-dir, --write-expectations, -o) cannot be written"),
    (
        EX_CONFIG,
        "configuration: an unknown or malformed adapter name, a -r that matches no "
        "requirement id, an unknown capability (-c, --require); checked before any collection",
    ),
    (EX_INTERRUPTED, "interrupted by a signal (Ctrl-C, SIGTERM, SIGHUP); reports of what ran"),
)


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
