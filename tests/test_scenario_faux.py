"""Broken inbox implementations are found through scenarios alone (tests/faux_inbox.py).

Each declares ``scenario`` but not the micro-step ``agent`` capability, so only the
scenario tests (conformance/test_scenario.py) can judge its agent; run through the real CLI
with the quick Hypothesis profile, each must fail exactly its broken rule's requirement
ids, pass the rules it keeps, and skip the micro-step tests as unsupported.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.rows import requirement_rows

#: The ownership tests only: tests/test_scenario_observed_kits.py covers the others.
ONLY = (
    "--capability", "scenario", "--hypothesis-profile", "quick",
    "-k", "not test_scenario_observed and not test_scenario_partial",
)  # fmt: skip
#: Requirement ids the scenario tests check, minus the reference-identity one (INBOX-031).
OWNERSHIP = {
    "INBOX-010", "INBOX-011", "INBOX-013", "INBOX-020", "INBOX-021",
    "ENV-050", "ENV-051", "ENV-053", "ENV-054", "ENV-055", "ENV-056", "ENV-058", "ENV-059",
    "ENV-060",
}  # fmt: skip


@pytest.mark.parametrize(
    ("factory", "must_fail"),
    [
        # the published release's separate-message placement: prefix contexts are separate
        # messages after the prompt; ownership (fate, block, late steering) still holds
        ("release_placement", {"ENV-050", "ENV-059", "ENV-060"}),
        ("block_keeps_contexts", {"INBOX-011"}),
        # the blocked prompt written as a user message, no block event (issue 45 item 4)
        ("block_writes_the_prompt", {"INBOX-011"}),
        ("late_steering_loses_contexts", {"INBOX-020"}),
        ("cancel_leaks_contexts", {"INBOX-021"}),
        ("two_delimiters", {"ENV-053"}),
        ("stale_requests", {"ENV-058"}),
    ],
)
def test_a_broken_inbox_is_found_through_scenarios_alone(
    tmp_path: Path, factory: str, must_fail: set[str]
) -> None:
    done, record = run_record(tmp_path, f"python:faux_inbox:{factory}", *ONLY)
    complete(record)
    assert done.returncode == 1, done.stdout[-2000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    failing = {rid for rid, status in rows.items() if status == "fail"}
    assert must_fail <= failing, rows
    wrongly = (OWNERSHIP - must_fail) & failing
    # a context leaked by a broken block or cancel is also a context without its message
    if factory == "block_keeps_contexts":
        wrongly -= {"INBOX-021"}
    assert not wrongly, sorted(wrongly)
    assert {str(t.outcome) for t in record.tests} <= {"pass", "fail", "skip", "unsupported"}


def test_the_reference_passes_through_scenarios_alone(tmp_path: Path) -> None:
    done, record = run_record(tmp_path, "python:faux_inbox:reference", *ONLY)
    complete(record)
    assert done.returncode == 0, done.stdout[-2000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert all(rows[rid] == "pass" for rid in OWNERSHIP), rows
