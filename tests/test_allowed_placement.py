"""Placement that differs from the reference only where seed 000 allows passes the seed
verdict of the agent areas and fails only profile ids (tests/allowed_placement.py; issue 25
item 1, D-195, D-196).

One CLI run per member over the agent tests that see a baked prompt (placement, inbox,
their snapshots and regression cases, the generated scenarios), the stateful machines
left out (their first failure for these members is REF-007, identity with the reference,
and shrinking it costs most of a run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.reporting.verdict import verdicts
from dsh_conformance.spec import load_catalog

SELECTION = (
    "--capability",
    "agent",
    "--capability",
    "scenario",
    "-k",
    "(test_placement or test_inbox or test_scenario) and not stateful",
    "--hypothesis-profile",
    "quick",
    "--fail-on",
    "seed",
)


@pytest.mark.parametrize(
    ("factory", "must_fail"),
    [
        # The delimiter shares the last snapshot block: only the profile's layout.
        ("delimiter_in_last_block", {"ENV-053"}),
        # Several prefix contexts in another order: the profile's order.
        ("prefix_contexts_reversed", {"ENV-053"}),
    ],
)
def test_allowed_placement_passes_the_seed_verdict(
    tmp_path: Path, factory: str, must_fail: set[str]
) -> None:
    done, record = run_record(tmp_path, f"python:allowed_placement:{factory}", *SELECTION)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    seed, _profile = verdicts(record)
    assert seed.passed, seed.failing
    catalog = load_catalog().requirements
    failing = {row.id for row in requirement_rows(record) if row.status == "fail"}
    assert must_fail <= failing, sorted(failing)
    assert {rid for rid in failing if catalog[rid].verdict == "seed"} == set()
