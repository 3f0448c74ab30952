"""Deliberately broken implementations are blamed on the right requirements, through the
runner, and on nothing else in their areas (tests/fauxmplementations.py,
tests/broken_foundation.py).

Statuses come from blame (D-160): a test that fails judges only the requirements its
failed checks name, so each set below is what the broken rule alone explains.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.rows import requirement_rows

AREAS = ("--capability", "uri", "--capability", "serialization", "--capability", "mention")
#: The explicit examples kill each member deterministically; few random ones are needed.
QUICK = ("--hypothesis-profile", "quick")
URI_OK = {"URI-001", "URI-002", "URI-003", "URI-005", "JS-001"}
SER_OK = {"SER-001", "SER-002", "SER-003", "SER-004", "SER-005"}


@pytest.mark.parametrize(
    ("adapter", "must_fail", "must_pass"),
    [
        # Padding breaks the no-padding decision (URI-004) and identity with the model; the
        # seed's base64url allows padding (D-5), and decoding and codes still hold.
        ("fauxmplementations:padded", {"URI-004", "REF-001"}, URI_OK | SER_OK),
        # A raw '<' breaks SER-001, SER-003 and the exact bytes (SER-004); the output is
        # still lossless JSON (SER-002), and URIs are untouched.
        (
            "fauxmplementations:unescaped_lt",
            {"SER-001", "SER-003", "SER-004"},
            {"SER-002", "SER-005"} | URI_OK | {"URI-004"},
        ),
        # Lenient decoding breaks canonical-only decoding; encoding is still right.
        ("fauxmplementations:lenient", {"URI-003"}, {"URI-001", "URI-002", "URI-004"} | SER_OK),
        # An unrelated code for undefined: only the pinned code fails (issue 11 item 9).
        (
            "broken_foundation:wrong_ser_code",
            {"SER-005"},
            {"SER-001", "SER-002", "SER-003", "SER-004"} | URI_OK,
        ),
    ],
)
def test_broken_implementations_fail_the_right_requirements(
    tmp_path: Path, adapter: str, must_fail: set[str], must_pass: set[str]
) -> None:
    done, record = run_record(tmp_path, f"python:{adapter}", *AREAS, *QUICK)
    complete(record)
    assert done.returncode == 1
    rows = {row.id: row.status for row in requirement_rows(record)}
    failing = {rid for rid, status in rows.items() if status == "fail"}
    assert must_fail <= failing, rows
    assert not (must_pass & failing), sorted(must_pass & failing)
    assert all(rows.get(rid) == "pass" for rid in must_pass), rows
    # The adapters are sound: non-conformance shows as fail/error, never crash/timeout.
    assert {str(t.outcome) for t in record.tests} <= {"pass", "fail", "error"}
