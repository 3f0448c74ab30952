"""Broken implementations of the agent/side areas are blamed on exactly their ids
(tests/broken_agentside.py; issue 11 items 7 and 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.rows import requirement_rows

# The placement tests (where the composed keyless flow and the host view are checked) and
# the inbox snapshots; every other agent test is untouched by these defects.
SELECTION = (
    "--capability",
    "agent",
    "-k",
    "test_placement or test_inbox_snapshots",
    "--hypothesis-profile",
    "quick",
)


@pytest.mark.parametrize(
    ("factory", "must_fail"),
    [
        # The raw Markdown mention reaches the model: the keyless flow and its snapshot.
        ("raw_mention", {"ENV-065", "REF-009"}),
        # The host view shows the snapshot as the user message.
        ("display_snapshot", {"ENV-072"}),
        # The title is derived from the snapshot.
        ("title_snapshot", {"ENV-073"}),
    ],
)
def test_broken_implementations_fail_exactly_their_ids(
    tmp_path: Path, factory: str, must_fail: set[str]
) -> None:
    _run(tmp_path, factory, must_fail, SELECTION)


def test_a_late_settlement_that_enqueues_fails_prep_006(tmp_path: Path) -> None:
    """Issue 11 item 9: the inbox tests (where preparation meets the agent)."""
    inbox = ("--capability", "agent", "-k", "test_inbox and not stateful and not program")
    _run(tmp_path, "late_settlement", {"PREP-006"}, (*inbox, "--hypothesis-profile", "quick"))


def _run(tmp_path: Path, factory: str, must_fail: set[str], selection: tuple[str, ...]) -> None:
    done, record = run_record(tmp_path, f"python:broken_agentside:{factory}", *selection)
    complete(record)
    assert done.returncode == 1
    failing = {row.id for row in requirement_rows(record) if row.status == "fail"}
    assert failing == must_fail
    assert {str(t.outcome) for t in record.tests} <= {"pass", "fail", "skip"}
