"""The zoo of broken implementations: every member is killed and blamed on its own ids.

tests/zoo/ holds the members (one defect each); tests/test_zoo_<area>.py runs each
area's through the real runner (tests/zoo/matrix.py, like ``tools/kill_matrix.py``) and
holds each to its declaration (tests/zoo/kills.py): the run fails, every id in ``kills``
has status ``fail``, and nothing else fails beyond what the defect really breaks
(``collateral_ok``, REF-* identity) or what tests/zoo/pending.py lists as awaiting
per-check blame.  Here: the declarations, and that every area has its file.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from zoo import AREAS, kills, members
from zoo.pending import PENDING

from dsh_conformance.spec import load_catalog

ROOT = Path(__file__).resolve().parents[1]
KEYS = [f"{e.area}:{e.factory}" for e in members()]


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


def test_every_area_runs_its_members_in_its_own_file() -> None:
    """Each area's members are killed by tests/test_zoo_<area>.py (tests/zoo/kills.py),
    so no member goes unrun and ``--dist loadfile`` can spread the areas."""
    files = {p.name for p in (ROOT / "tests").glob("test_zoo_*.py")}
    assert files == {f"test_zoo_{area}.py" for area in AREAS}
    for area in AREAS:
        module = importlib.import_module(f"test_zoo_{area}")
        assert area == module.AREA
        assert (
            module.test_member_is_killed_on_its_own_ids
            is kills.test_member_is_killed_on_its_own_ids
        )
        assert module.pytest_generate_tests is kills.pytest_generate_tests
    assert [k for area in AREAS for k in kills.area_keys(area)] == KEYS
