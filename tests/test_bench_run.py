"""tools/bench_run.py: the reference run against a passing non-reference one (issue 44).

Catches: a renamed reference the suite still takes for the reference (its differential
tests would be skipped, so the bench would compare the reference with itself); a split
that counts a test one run skipped among the shared ones, or misses the differential
tests; a summary without the fields tools/bench_upstream.py --run-ratio reads.
Keeps: any timing (nothing here is timed).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_run

from dsh_conformance.suite import REFERENCE_NAME, SELF_COMPARISON


def test_the_renamed_reference_is_not_the_reference_and_answers_as_it() -> None:
    from dsh_conformance.adapters.reference import ReferenceAdapter

    renamed = bench_run.renamed_reference()
    assert renamed.handshake().implementation.name != REFERENCE_NAME
    assert renamed.handshake().capabilities == ReferenceAdapter().handshake().capabilities
    assert renamed.call("uri.encode", {"sessionId": "s"}) == ReferenceAdapter().call(
        "uri.encode", {"sessionId": "s"}
    )
    assert SELF_COMPARISON.startswith(bench_run.SELF_COMPARISON)


def _run(tests: dict[str, tuple[str, float, str]], wall: float) -> dict[str, Any]:
    return {"tests": tests, "wall_s": wall, "cpu_s": wall, "host_cpu_s": 0.0}


def test_shared_tests_are_those_both_passed_and_differential_those_the_reference_skipped() -> None:
    reference = _run(
        {
            "t::a": ("pass", 1.0, ""),
            "t::b": ("pass", 2.0, ""),
            "t::machine": ("skipped", 0.0, SELF_COMPARISON),
            "t::other": ("unsupported", 0.0, ""),
        },
        4.0,
    )
    other = _run(
        {
            "t::a": ("pass", 1.5, ""),
            "t::b": ("pass", 3.0, ""),
            "t::machine": ("pass", 10.0, ""),
            "t::other": ("pass", 7.0, ""),
        },
        20.0,
    )
    got = bench_run.split(reference, other)
    assert (got["shared_tests"], got["shared_reference_s"], got["shared_other_s"]) == (2, 3.0, 4.5)
    assert got["shared_ratio"] == 1.5
    assert (got["differential_tests"], got["differential_other_s"]) == (1, 10.0)
    row = {
        "reference_wall_s": 4.0,
        "other_wall_s": 20.0,
        "ratio": 5.0,
        "reference_cpu_s": 4.0,
        "other_harness_cpu_s": 16.0,
        "other_host_cpu_s": 4.0,
        **got,
    }
    summary = bench_run.summarize([row], "served", bench_run.SERVED, 36, "quick")
    assert {"ratio", "low", "high", "reference_s", "other_s", "shared_ratio", "note"} <= set(
        summary
    )
    assert (summary["ratio"], summary["shared_ratio"], summary["cpu"]["harness_ratio"]) == (
        5,
        1.5,
        4,
    )
    assert "1 differential tests" in summary["note"]
