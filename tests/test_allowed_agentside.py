"""Allowed differences for side sessions pass the seed verdict and fail only profile ids
(tests/allowed_agentside.py; issue 10 item 4, D-94, D-97, D-106)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.reporting.verdict import verdicts
from dsh_conformance.spec import load_catalog

# The side-session tests, without the Hypothesis tests whose only failures for these
# members are profile ids (they would spend the CI budget shrinking): the stateful machine
# (REF-008 first), the truncation properties (SIDE-056, REF-008) and SIDE-057.
SELECTION = (
    "--capability",
    "side",
    "-k",
    "not stateful and not truncat and not explicit_handback",
    "--hypothesis-profile",
    "quick",
    "--fail-on",
    "seed",
)


@pytest.mark.parametrize(
    ("factory", "must_fail"),
    [
        # Another framing text with the seed's meaning: only identity with the model.
        ("reworded_framing", {"REF-008", "REF-009"}),
        # Another heading and handback request: the profile's texts and identity.
        ("reworded_handback", {"REF-008", "REF-009", "SIDE-056", "SIDE-058"}),
        # Requests without isError: false and provenance: the reference's bytes only.
        ("lean_requests", {"SIDE-090"}),
    ],
)
def test_allowed_differences_pass_the_seed_verdict(
    tmp_path: Path, factory: str, must_fail: set[str]
) -> None:
    done, record = run_record(tmp_path, f"python:allowed_agentside:{factory}", *SELECTION)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    seed, _profile = verdicts(record)
    assert seed.passed
    catalog = load_catalog().requirements
    failing = {row.id for row in requirement_rows(record) if row.status == "fail"}
    assert must_fail <= failing, sorted(failing)
    assert {rid for rid in failing if catalog[rid].verdict == "seed"} == set()
    assert {str(t.outcome) for t in record.tests} <= {"pass", "fail", "skip"}
