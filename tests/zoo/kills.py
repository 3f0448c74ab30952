"""The zoo's kill test, run area by area: every member is killed and blamed on its own ids.

Each ``tests/test_zoo_<area>.py`` names its ``AREA`` and imports the test, its
parametrization and its fixture from here, so ``--dist loadfile`` spreads the zoo's
runs over the xdist workers instead of holding one worker for all of them
(tests/test_zoo.py checks that every area has its file).  A member is held to its
declaration: the run fails, every id in ``kills`` has status ``fail``, and nothing else
fails beyond what the defect really breaks (``collateral_ok``, REF-* identity) or what
tests/zoo/pending.py lists as awaiting per-check blame.
"""

from __future__ import annotations

from typing import Any

import pytest

from zoo import members
from zoo.matrix import run_shared
from zoo.pending import PENDING


def area_keys(area: str) -> list[str]:
    """The members of *area* (``area:Factory``), in zoo order."""
    return [f"{e.area}:{e.factory}" for e in members() if e.area == area]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "key" in metafunc.fixturenames:
        metafunc.parametrize("key", area_keys(metafunc.module.AREA))


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    return {r["member"]: r for r in run_shared(area_keys(request.module.AREA))}


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
