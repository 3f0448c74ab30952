"""The run record: a replayable JSON Lines file, written as the run goes.

Line 1 is a header (suite and spec versions, the adapter's handshake, Hypothesis
profile and seed, spec profile); then one line per finished test; last a footer with
totals.  Every line is flushed when written, so a crashed run keeps every completed
result, and a missing footer marks a truncated run (spec/schemas/record.json, D-124).

One module per concept: ``result`` (one test), ``run`` (a whole record), ``schema``
(lines against the schema), ``writer`` and ``reader``.  Everything is re-exported here.
"""

from __future__ import annotations

from dsh_conformance.record.reader import load_record
from dsh_conformance.record.result import TestResult
from dsh_conformance.record.run import RunRecord, components_short, components_text
from dsh_conformance.record.schema import FORMAT, FORMAT_VERSION, check_line, conform
from dsh_conformance.record.writer import RecordWriter, settle_exit_status

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "RecordWriter",
    "RunRecord",
    "TestResult",
    "check_line",
    "components_short",
    "components_text",
    "conform",
    "load_record",
    "settle_exit_status",
]
