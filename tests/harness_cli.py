"""Helpers for tests that drive the real ``dsh-conformance`` CLI in a subprocess."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from dsh_conformance.record import RunRecord, load_record

TESTS = Path(__file__).resolve().parent


def cli_argv(*args: str) -> list[str]:
    """The command line of ``python -m dsh_conformance.cli ARGS``."""
    return [sys.executable, "-m", "dsh_conformance.cli", *args]


def run_args(adapter: str, out: Path, *extra: str) -> list[str]:
    """The arguments of ``run`` against *adapter*, writing its reports into *out*.

    Gated on every verdict (``--fail-on all``) unless *extra* chooses: these tests ask
    whether anything failed; tests/test_verdicts.py checks the default gate.
    """
    gate = [] if "--fail-on" in extra else ["--fail-on", "all"]
    return ["run", "--adapter", adapter, "--report-dir", str(out), *gate, *extra]


def run_argv(adapter: str, out: Path, *extra: str) -> list[str]:
    """The whole command line of ``run_args`` (for runs started with Popen)."""
    return cli_argv(*run_args(adapter, out, *extra))


def cli(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m dsh_conformance.cli ARGS`` with tests/ importable."""
    full_env = {**os.environ, "PYTHONPATH": str(TESTS), "COLUMNS": "200", **(env or {})}
    return subprocess.run(
        cli_argv(*args),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        env=full_env,
        timeout=timeout,
        check=False,
    )


def fake(*faults: str, state: Path | None = None) -> str:
    """The adapter name of the fault kit with *faults*."""
    argv = [sys.executable, "-m", "dsh_conformance.adapters.fake"]
    for fault in faults:
        argv += ["--fault", fault]
    if state is not None:
        argv += ["--state", str(state)]
    return "subprocess:" + shlex.join(argv)


def served() -> str:
    return "subprocess:" + shlex.join([sys.executable, "-m", "dsh_conformance.adapters.serve"])


def run_record(
    tmp_path: Path, adapter: str, *extra: str, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], RunRecord]:
    """``run`` into tmp_path/out and read the record back."""
    out = tmp_path / "out"
    done = cli(
        *run_args(adapter, out, "--seed", "7", "--hypothesis-profile", "dev", *extra),
        env=env,
    )
    return done, load_record(out / "record.jsonl")


def outcomes(record: RunRecord) -> dict[str, int]:
    counts: dict[str, int] = {}
    for test in record.tests:
        counts[str(test.outcome)] = counts.get(str(test.outcome), 0) + 1
    return counts


def complete(record: RunRecord) -> None:
    """Nothing lost: a footer, and one line per selected test."""
    assert record.footer is not None, "the record has no footer"
    assert len(record.tests) == record.header["selected"]


__all__: Sequence[str] = ["cli", "complete", "fake", "outcomes", "run_record", "served"]
