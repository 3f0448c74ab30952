"""Deliberately broken implementations are blamed on the right requirements, through the
runner, and on nothing else in their areas (tests/fauxmplementations.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.summary import requirement_rows

AREAS = ("--capability", "uri", "--capability", "serialization", "--capability", "mention")


@pytest.mark.parametrize(
    ("factory", "must_fail", "must_pass"),
    [
        # Padding breaks the URI shape; canonical-only decoding and error codes still hold.
        ("padded", {"URI-001", "URI-004"}, {"URI-003", "URI-005", "SER-001", "SER-005"}),
        # A raw '<' breaks SER-001 (and the exact-bytes rule); the output is still
        # lossless JSON (SER-002), and URIs are untouched.
        (
            "unescaped_lt",
            {"SER-001", "SER-003", "SER-004"},
            {"SER-002", "SER-005", "SER-006", "URI-001", "URI-002", "URI-003", "URI-004"}
            | {"URI-005"},
        ),
        # Lenient decoding breaks canonical-only decoding; encoding is still right.
        ("lenient", {"URI-003"}, {"URI-001", "URI-002", "SER-001", "SER-004"}),
    ],
)
def test_broken_implementations_fail_the_right_requirements(
    tmp_path: Path, factory: str, must_fail: set[str], must_pass: set[str]
) -> None:
    done, record = run_record(tmp_path, f"python:fauxmplementations:{factory}", *AREAS)
    complete(record)
    assert done.returncode == 1
    rows = {row.id: row.status for row in requirement_rows(record)}
    failing = {rid for rid, status in rows.items() if status == "fail"}
    assert must_fail <= failing, rows
    assert not (must_pass & failing), sorted(must_pass & failing)
    # The adapters are sound: non-conformance shows as fail/error, never crash/timeout.
    assert {str(t.outcome) for t in record.tests} <= {"pass", "fail", "error"}
