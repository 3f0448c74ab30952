"""Run the CLI on the independent host and read its report.json (shared by its two tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

ROOT: Final = Path(__file__).resolve().parents[1]
HOST: Final = ROOT / "tests" / "independent_host" / "host.py"
ADAPTER: Final = f"subprocess:{sys.executable} {HOST}"


def run_report(out: Path, seed: int, capabilities: Sequence[str], *extra: str) -> dict[str, Any]:
    """The report.json of one CLI run on the host: quick profile, no manifest, every level
    gated, only *capabilities* declared, *extra* arguments after them."""
    argv = [
        sys.executable,
        "-m",
        "dsh_conformance.cli",
        "run",
        "--adapter",
        ADAPTER,
        "--no-expectations",
        "--hypothesis-profile",
        "quick",
        "--seed",
        str(seed),
        "--fail-on",
        "all",
        "--report-dir",
        str(out),
        *extra,
    ]
    for capability in capabilities:
        argv += ["--capability", capability]
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False
    )
    path = out / "report.json"
    assert path.exists(), f"no report (exit {done.returncode}):\n{done.stderr[-3000:]}"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def failures(report: dict[str, Any], verdict: str) -> str:
    """Each failing requirement of a verdict with the first line of a failing test's message."""
    failing = set(report["verdicts"][verdict]["failing"])
    lines = []
    for test in report["tests"]:
        blamed = failing & set(test.get("requirements", []))
        if test.get("outcome") in {"fail", "error"} and blamed:
            message = (test.get("message") or "").splitlines()[:1]
            lines.append(f"{sorted(blamed)} {test['nodeid']}: {' '.join(message)[:200]}")
    return "\n".join(lines)
