"""Wire fidelity: the whole suite reports identically against the reference model
in-process and behind the stdio protocol (decision D-129).

Lone-surrogate ids, key order, numbers and typed errors all cross the pipe here; any
loss shows up as a test whose outcome or message differs between the two records.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_argv, served

from dsh_conformance.record import RunRecord, load_record


def start(tmp_path: Path, adapter: str) -> tuple[subprocess.Popen[str], Path]:
    out = tmp_path / adapter.split(":")[0]
    argv = run_argv(adapter, out, "--seed", "0", "--hypothesis-profile", "quick")
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return process, out / "record.jsonl"


def finish(process: subprocess.Popen[str], path: Path) -> RunRecord:
    _, stderr = process.communicate(timeout=900)
    assert process.returncode in (0, 1), stderr
    record = load_record(path)
    complete(record)
    return record


def comparable(record: RunRecord) -> dict[str, tuple[str, str]]:
    return {t.nodeid: (str(t.outcome), t.message) for t in record.tests}


def test_in_process_and_subprocess_reports_are_identical(tmp_path: Path) -> None:
    # Both runs at once: the same derandomized examples, half the wall-clock time.
    left_run, right_run = start(tmp_path, "reference"), start(tmp_path, served())
    in_process, over_the_pipe = finish(*left_run), finish(*right_run)
    assert over_the_pipe.header["adapter"]["transport"] == "subprocess"
    assert (
        in_process.header["adapter"]["implementation"]
        == (over_the_pipe.header["adapter"]["implementation"])
    )
    assert in_process.header["selected"] == over_the_pipe.header["selected"]
    left, right = comparable(in_process), comparable(over_the_pipe)
    differing = {
        k: (left.get(k), right.get(k))
        for k in left.keys() | right.keys()
        if left.get(k) != right.get(k)
    }
    assert not differing, differing
    # The suite does send lone surrogates over the wire (decision D-14).
    assert any("\\ud800" in t.nodeid or "lone" in t.nodeid for t in in_process.tests)
    assert over_the_pipe.footer is not None
    assert over_the_pipe.footer["restarts"] == 0
