"""What a pytest, Hypothesis or Bowtie user reaches for (issue 38): ``-v``,
``--collect-only``, ``--max-examples``, ``info``, and a progress display that says
when Hypothesis is shrinking a failing example (D-312)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli

from dsh_conformance import shrinking
from dsh_conformance.adapters.contract import PROTOCOL_VERSION
from dsh_conformance.cli import main
from dsh_conformance.record import load_record


def test_verbose_prints_a_line_per_test(tmp_path: Path) -> None:
    done = cli("run", "-r", "URI-004", "-v", "--hypothesis-profile", "quick")
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("pass ")]
    ids = [line.split()[1] for line in lines]
    assert len(ids) >= 3
    assert all(i.startswith("conformance/") for i in ids)
    assert len(set(ids)) == len(ids)


def test_collect_only_lists_the_selection_and_runs_nothing(tmp_path: Path) -> None:
    done = cli("run", "-r", "URI-004", "--collect-only", "--report-dir", str(tmp_path / "o"))
    assert done.returncode == 0, done.stderr
    listed = [line.split("\t") for line in done.stdout.splitlines()]
    assert listed
    assert all("URI-004" in reqs.split() for _, reqs in listed)
    assert f"{len(listed)} tests would run" in done.stderr
    assert not (tmp_path / "o" / "record.jsonl").exists()  # nothing ran
    one = listed[0][0]
    exact = cli("run", "--test", one, "--collect-only", "--format", "json")
    assert [t["id"] for t in json.loads(exact.stdout)] == [one]


def test_max_examples_is_recorded_and_replayed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli("run", "-r", "URI-004", "--max-examples", "3", "--report-dir", str(out))
    assert done.returncode == 0, done.stderr
    record = load_record(out / "record.jsonl")
    assert record.header["hypothesis"]["max_examples"] == 3
    assert record.header["hypothesis"]["max_examples_option"] == 3
    assert "--max-examples 3" in done.stdout or "--max-examples 3" in (out / "report.md").read_text(
        encoding="utf-8"
    )


def test_info_shows_the_handshake() -> None:
    result = CliRunner().invoke(main, ["info", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["implementation"]["name"] == "dsh-conformance reference model"
    assert "uri" in data["capabilities"]
    assert data["protocol"] == PROTOCOL_VERSION


def test_info_of_an_adapter_that_cannot_start_exits_70() -> None:
    result = CliRunner().invoke(main, ["info", "--adapter", "subprocess:false"])
    assert result.exit_code == 70


_SHRINKS = """
import io
import pytest
from hypothesis import Phase, given, settings, strategies as st
from rich.console import Console
from dsh_conformance.cli.progress import Progress

buffer = io.StringIO()
progress = Progress(Console(file=buffer, force_terminal=False, width=200))
progress.pytest_sessionstart(None)
progress.pytest_runtest_logstart("conformance/test_uri.py::test_x", None)


@settings(database=None, max_examples=50, phases=[Phase.generate, Phase.shrink])
@given(st.integers())
def fails_above_ten(x):
    assert x < 10


try:
    with pytest.raises(AssertionError):
        fails_above_ten()
finally:
    progress.pytest_sessionfinish(None)
print(buffer.getvalue())
"""


def test_progress_says_when_hypothesis_shrinks() -> None:
    # a fresh interpreter: Hypothesis' engine and profiles are process state that the
    # in-process runs of other tests in this worker change
    done = subprocess.run(
        [sys.executable, "-c", _SHRINKS], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "shrinking: test_uri.py::test_x failed" in done.stdout


def test_a_passing_property_announces_no_shrinking() -> None:
    heard: list[int] = []

    def listener() -> None:
        heard.append(1)

    shrinking.on_shrink(listener)

    @settings(database=None, max_examples=20)
    @given(st.integers())
    def passes(x: int) -> None:
        assert isinstance(x, int)

    try:
        passes()
    finally:
        shrinking.forget(listener)
    assert heard == []


def test_shrinking_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    from hypothesis.internal.conjecture import engine

    monkeypatch.setattr(engine, "MAX_SHRINKING_SECONDS", engine.MAX_SHRINKING_SECONDS)
    monkeypatch.delenv("DSH_SHRINK_SECONDS", raising=False)
    assert shrinking.cap_shrinking()
    assert engine.MAX_SHRINKING_SECONDS == shrinking.SHRINK_SECONDS
    monkeypatch.setenv("DSH_SHRINK_SECONDS", "300")
    assert shrinking.cap_shrinking()
    assert engine.MAX_SHRINKING_SECONDS == 300
