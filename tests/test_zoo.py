"""The zoo of broken implementations: every member is killed and blamed on its own ids.

tests/zoo/ holds the members (one defect each); this runs them all through the real
runner in two worker processes (tests/zoo/matrix.py, like ``tools/kill_matrix.py``) and
holds each to its declaration: the run fails, every id in ``kills`` has status
``fail``, and nothing else fails beyond what the defect really breaks (``collateral_ok``,
REF-* identity) or what tests/zoo/pending.py lists as awaiting per-check blame.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from zoo import AREAS, members
from zoo.matrix import run_zoo
from zoo.pending import PENDING

from dsh_conformance.spec import load_catalog

ROOT = Path(__file__).resolve().parents[1]
KEYS = [f"{e.area}:{e.factory}" for e in members()]


@pytest.fixture(scope="module")
def results() -> dict[str, dict[str, Any]]:
    return {r["member"]: r for r in run_zoo(KEYS, workers=2)}


def test_every_area_has_at_least_three_members_and_the_zoo_forty() -> None:
    per_area = {area: sum(e.area == area for e in members()) for area in AREAS}
    assert all(n >= 3 for n in per_area.values()), per_area
    assert len(KEYS) >= 40
    assert len(set(KEYS)) == len(KEYS)


def test_declarations_name_one_invariant_and_known_ids() -> None:
    catalog = load_catalog().requirements
    for entry in members():
        assert entry.name, entry
        assert entry.invariant, entry
        assert entry.kills, f"{entry.factory} declares no kills"
        unknown = (entry.kills | entry.collateral_ok) - catalog.keys()
        assert not unknown, f"{entry.factory}: unknown ids {sorted(unknown)}"
        assert not entry.kills & entry.collateral_ok


def test_pending_collateral_names_only_members() -> None:
    assert set(PENDING) <= set(KEYS)


def test_committed_matrix_lists_the_current_zoo() -> None:
    """reports/kill-matrix.json is regenerated whenever members change."""
    data = json.loads((ROOT / "reports" / "kill-matrix.json").read_text("utf-8"))
    assert [r["member"] for r in data["results"]] == KEYS
    declared = {f"{e.area}:{e.factory}": sorted(e.kills) for e in members()}
    assert {r["member"]: r["kills"] for r in data["results"]} == declared


@pytest.mark.parametrize("key", KEYS)
def test_member_is_killed_on_its_own_ids(results: dict[str, dict[str, Any]], key: str) -> None:
    r = results[key]
    on_target = r["killed"] and r["on_target"]
    if r["gap"]:
        assert not on_target, f"{key} is now killed on {r['kills']}: remove its `gap`"
        pytest.xfail(f"known gap: {r['gap']}")
    assert r["killed"], f"{key} ({r['invariant']}) passed its area"
    assert not r["missed"], f"{key}: {r['missed']} not blamed; failing: {r['failing']}"
    if r["seed_kills"]:  # issue 25: the seed verdict fails on the broken sentence's own id
        assert r["seed_on_target"], f"{key}: the seed verdict does not fail on {r['seed_kills']}"
    extra = set(r["unexpected"]) - PENDING.get(key, frozenset())
    assert not extra, (
        f"{key}: also blamed on {sorted(extra)} (by {[r['killed_by'][i] for i in sorted(extra)]})"
    )
    # a result a check cannot read blames nothing (D-251): a broken member may return one,
    # as long as it is still killed on its own ids above; it never crashes or hangs
    assert set(r["outcomes"]) <= {"pass", "fail", "error", "skipped", "protocol"}, r["outcomes"]
