"""What ``run`` leaves behind (issue 43): a report set written whole or not at all, a
footer that says the status the command exits with, and a default folder for the
Quick start's bare ``dsh-conformance run``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli

from dsh_conformance.cli import outputs
from dsh_conformance.errors import HarnessError
from dsh_conformance.record import load_record

SLICE = ("-r", "URI-001", "--seed", "3", "--hypothesis-profile", "quick")
SET = dict.fromkeys(outputs.REPORTS, "new")


def footer(path: Path) -> dict[str, Any]:
    found = load_record(path).footer
    assert found is not None
    return dict(found)


def test_a_blocked_report_leaves_no_report_and_the_footer_says_73(tmp_path: Path) -> None:
    """Catches the old writer: exit 73, but report.md already written saying pass and
    the footer saying exit_status 0."""
    out = tmp_path / "out"
    (out / "junit.xml").mkdir(parents=True)
    (out / "report.md").write_text("an earlier run's report: ✅ pass", encoding="utf-8")
    done = cli("run", "--report-dir", str(out), *SLICE)
    assert done.returncode == 73, done.stderr
    assert "error[cannot-write]" in done.stderr
    assert f"its record is {out / 'record.jsonl'}" in done.stderr
    left = sorted(p.name for p in out.iterdir() if p.is_file())
    assert left == ["pytest.log", "record.jsonl"]  # no report, old or new
    assert not list(out.glob(".dsh-reports-*"))  # and no staging folder
    assert footer(out / "record.jsonl")["exit_status"] == 73


def test_a_write_that_fails_half_way_withdraws_the_whole_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in outputs.REPORTS:
        (tmp_path / name).write_text("old", encoding="utf-8")
    moved: list[str] = []
    real = os.replace

    def flaky(source: Any, target: Any) -> None:
        if len(moved) == 2:
            raise PermissionError(13, "Permission denied")
        moved.append(str(target))
        real(source, target)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(HarnessError) as caught:
        outputs.publish(SET, tmp_path)
    assert caught.value.exit_status == 73
    assert len(moved) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_whole_set_replaces_the_earlier_one(tmp_path: Path) -> None:
    (tmp_path / "report.md").write_text("old", encoding="utf-8")
    written = outputs.publish(SET, tmp_path)
    assert [p.name for p in written] == list(outputs.REPORTS)
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == SET
