"""The generated "Issue 44 goals" section of reports/performance.md (tools/bench_goals.py).

No timing here: the section is built from rows given to it, and must say what they say
(a goal met or not by its own figure) and keep its method text; a ``--run-ratio`` file
that lacks a field or contradicts itself is refused, never rendered.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_goals

TRANSPORT = {
    "goal": "transport-bare",
    "calls": 2000,
    "ratio": 1.35,
    "low": 1.2,
    "high": 2.0,
    "fastest_ratio": 1.3,
    "cpu_ratio": 1.4,
    "model_us": 2.0,
    "upstream_us": 1.48,
    "floors_ratio": 1.27,
    "floors_cpu_ratio": 1.25,
}
MODEL = {**TRANSPORT, "goal": "transport-model", "ratio": 1.1, "cpu_ratio": 1.12}
RETENTION = {"goal": "retention-json", "ratio": 1.9, "low": 1.8, "high": 2.1}
MEMORY = {"ratio": 4.1, "peak_mb": 90.0}
STORED = {"ratio": 1.2, "peak_mb": 26.0}


def _section(run_ratio: dict[str, object] | None = None) -> str:
    rows = [TRANSPORT, MODEL, RETENTION]
    return "\n".join(bench_goals.goals_section(rows, MEMORY, STORED, run_ratio))


def test_each_goal_is_judged_by_its_own_figure() -> None:
    text = _section()
    transport = next(line for line in text.splitlines() if "pipelined" in line)
    assert "wall **1.35x**" in transport
    assert "1.27x the bare one" in transport
    assert transport.endswith("| **no** |")
    memory = next(line for line in text.splitlines() if "peak memory" in line)
    assert "whole process: **no**" in memory
    assert "from the stored log: yes" in memory
    retention = next(line for line in text.splitlines() if "retention" in line)
    assert retention.endswith("| yes |")
    assert "not measured in this regeneration" in text
    assert bench_goals.GOALS_METHOD[0] in text


def test_a_run_ratio_file_fills_the_run_row(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    fields = {"ratio": 1.25, "low": 1.1, "high": 1.4, "reference_s": 9.0, "other_s": 11.25}
    path.write_text(json.dumps({**fields, "note": "farm-bench, seed 36"}), "utf-8")
    row = next(
        line
        for line in _section(bench_goals.read_run_ratio(path)).splitlines()
        if "non-reference" in line
    )
    assert "**1.25x**" in row
    assert "farm-bench, seed 36" in row
    assert row.endswith("| yes |")


@pytest.mark.parametrize(
    "data",
    [
        [],
        {"ratio": 1.2, "low": 1.1, "high": 1.4, "reference_s": 9.0},
        {"ratio": 1.2, "low": 1.3, "high": 1.4, "reference_s": 9.0, "other_s": 10.8},
        {"ratio": "1.2", "low": 1.1, "high": 1.4, "reference_s": 9.0, "other_s": 10.8},
        {"ratio": 1.2, "low": 1.1, "high": 1.4, "reference_s": 9.0, "other_s": 10.8, "note": 3},
    ],
)
def test_a_run_ratio_file_that_does_not_hold_is_refused(tmp_path: Path, data: object) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(SystemExit):
        bench_goals.read_run_ratio(path)


WIRE = {
    "ratio": 3.0,
    "peak_mb": 64.0,
    "text_mb": 21.3,
    "interpreter": 0.66,
    "imports": 0.9,
    "prepare": 1.44,
    "line": 1.07,
}


def test_the_transport_s_own_cost_is_judged_on_wall_time() -> None:
    """D-535: against the same-work echo, on wall time (the issue's measure); CPU beside."""
    rows = [TRANSPORT, {**MODEL, "ratio": 1.25, "cpu_ratio": 1.1}, RETENTION]
    text = "\n".join(bench_goals.goals_section(rows, MEMORY, STORED, None))
    own = next(line for line in text.splitlines() if "own cost" in line)
    assert "wall **1.25x**" in own
    assert "CPU of both ends 1.10x" in own
    assert own.endswith("| **no** |")
    rows[1] = {**MODEL, "ratio": 1.05, "cpu_ratio": 1.3}
    text = "\n".join(bench_goals.goals_section(rows, MEMORY, STORED, None))
    assert next(line for line in text.splitlines() if "own cost" in line).endswith("| yes |")


def test_served_memory_shows_the_whole_process_and_what_the_request_adds() -> None:
    """D-536: both figures, each judged on its own (the whole process met since the line
    is spooled, D-485)."""
    text = "\n".join(bench_goals.goals_section([], MEMORY, STORED, None, [WIRE]))
    row = next(line for line in text.splitlines() if "request line" in line)
    assert "whole process **3.00x**" in row
    assert "what the request adds **1.44x**" in row
    assert "the 1.07x line spooled to a file as it arrives, not held (D-485)" in row
    assert row.endswith("| whole process: **no**, added: yes |")
    met = {**WIRE, "ratio": 1.31, "prepare": 0.38}
    text = "\n".join(bench_goals.goals_section([], MEMORY, STORED, None, [met]))
    row = next(line for line in text.splitlines() if "request line" in line)
    assert "whole process **1.31x**" in row
    assert row.endswith("| whole process: yes, added: yes |")


def test_the_like_for_like_run_row_appears_with_shared_ratio(tmp_path: Path) -> None:
    """D-503: the whole run and the tests both runs run are each judged on their own."""
    path = tmp_path / "run.json"
    fields = {"ratio": 2.4, "low": 2.0, "high": 2.6, "reference_s": 10.0, "other_s": 24.0}
    path.write_text(json.dumps({**fields, "shared_ratio": 1.06}), "utf-8")
    lines = _section(bench_goals.read_run_ratio(path)).splitlines()
    assert next(line for line in lines if "non-reference" in line).endswith("| **no** |")
    shared = next(line for line in lines if "like for like" in line)
    assert "**1.06x**" in shared
    assert shared.endswith("| yes |")
    path.write_text(json.dumps({**fields, "shared_ratio": "1.06"}), "utf-8")
    with pytest.raises(SystemExit):
        bench_goals.read_run_ratio(path)
