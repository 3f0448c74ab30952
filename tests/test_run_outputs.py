"""What ``run`` leaves behind (issue 43): a report set written whole or not at all, a
footer that says the status the command exits with, and a default folder for the
Quick start's bare ``dsh-conformance run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import TESTS, cli, cli_argv

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


def test_the_quick_start_run_writes_its_reports_to_dsh_report_and_says_where(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DSH_REPORT_DIR"}
    env["PYTHONPATH"] = str(TESTS)
    done = subprocess.run(
        cli_argv("run", *SLICE),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "dsh-report"
    for name in (*outputs.REPORTS, "record.jsonl"):
        assert (folder / name).is_file(), name
    assert "reports: dsh-report/report.html and dsh-report/report.md" in done.stderr
    assert footer(folder / "record.jsonl")["exit_status"] == 0


def test_a_run_where_the_default_folder_cannot_be_written_still_runs(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    done = cli("run", *SLICE, env={"DSH_REPORT_DIR": str(blocker / "reports")})
    assert done.returncode == 0, done.stderr
    assert "dsh-conformance: no reports:" in done.stderr
    assert "report.html" not in done.stderr


def test_json_on_stdout_and_reports_in_the_folder(tmp_path: Path) -> None:
    out = tmp_path / "r"
    done = cli("run", *SLICE, "--format", "json", env={"DSH_REPORT_DIR": str(out)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["header"]["hypothesis"]["seed"] == 3
    assert (out / "report.json").is_file()
