"""pytest-xdist scale-out: per-worker record parts merged into one valid record with the
same per-test outcomes as a serial run of the same seed (decision D-138)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import TESTS, complete, run_argv

from dsh_conformance.record import RunRecord, load_record

#: A broken implementation, so the outcomes to compare are not all "pass".
ADAPTER = "python:fauxmplementations:padded"
SLICE = ("--requirement", "URI-*", "--seed", "7", "--hypothesis-profile", "dev")


def start(out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {"PYTHONPATH": str(TESTS)}
    import os

    return subprocess.Popen(
        run_argv(ADAPTER, out, *SLICE, *extra),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )


def finish(process: subprocess.Popen[str], out: Path) -> RunRecord:
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 1, stderr  # the padded URIs fail URI-001/URI-004
    # stderr is for people: no plugin's warning (pytest-benchmark warned three times, once
    # per process, that xdist disables it -- the suite has no benchmarks).
    assert "Warning" not in stderr, stderr
    return load_record(out / "record.jsonl")  # validated against record.json line by line


def test_a_parallel_run_matches_a_serial_run(tmp_path: Path) -> None:
    serial_out, parallel_out = tmp_path / "serial", tmp_path / "parallel"
    serial_run = start(serial_out)
    parallel_run = start(parallel_out, "--workers", "2")
    serial, parallel = finish(serial_run, serial_out), finish(parallel_run, parallel_out)
    complete(serial)
    complete(parallel)
    assert parallel.header["workers"] == 2
    assert parallel.header["selected"] == serial.header["selected"] == len(serial.tests)
    outcomes = {t.nodeid: str(t.outcome) for t in serial.tests}
    assert {t.nodeid: str(t.outcome) for t in parallel.tests} == outcomes
    assert {"pass", "fail"} <= set(outcomes.values())
    assert parallel.footer is not None
    assert parallel.footer["totals"] == serial.footer["totals"]  # type: ignore[index]
    assert not list(parallel_out.glob("*.part"))  # merged, then removed
