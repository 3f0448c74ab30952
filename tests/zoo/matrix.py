"""Run the zoo through the real runner and build the kill matrix.

Each member runs in-process (``dsh_conformance.runner.run``) against its area with the
``quick`` Hypothesis profile and a fixed seed, in a pool of worker processes.  A member
is *killed* when its run fails, and *on target* when every id in its ``kills`` has
status ``fail``; any other failing id is collateral (``collateral_ok`` lists the ones
the defect really breaks as well).  REF-* ids (identity with the reference model) are
always acceptable collateral: a member differs from the reference by construction.
"""

from __future__ import annotations

import atexit
import functools
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Final

TESTS: Final = Path(__file__).resolve().parents[1]
SEED: Final = 20260824
#: The ``quick`` profile without shrinking: a kill needs a failing example, not the
#: smallest one, and shrinking is most of a broken member's run time.
PROFILE: Final = "zoo-quick"


def _init() -> None:
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))
    from hypothesis import Phase, settings

    from dsh_conformance.pytest_plugin import PROFILES

    phases = (Phase.explicit, Phase.reuse, Phase.generate)
    settings.register_profile(PROFILE, **PROFILES["quick"], phases=phases)


class _NativeTracebacks:
    """pytest's own failure text (its terminal's, which a member's run discards) in the
    native style: the long style parses a test module's source for every frame of every
    failure.  The record's traceback is the harness's own either way, and a member's
    summary reads no failure text."""

    def pytest_configure(self, config: Any) -> None:
        config.option.tbstyle = "native"


def _functions(tests: Sequence[Any]) -> list[str]:
    """Distinct test functions (parameters stripped) with how many of their cases failed."""
    counts: dict[str, int] = {}
    for test in tests:
        name = test.nodeid.split("[", 1)[0]
        counts[name] = counts.get(name, 0) + 1
    return [name if n == 1 else f"{name} (x{n})" for name, n in sorted(counts.items())]


def run_member(key: str, profile: str = PROFILE, seed_only: bool = False) -> dict[str, Any]:
    """Run one member (``area:Factory``) under Hypothesis *profile* and summarize its
    record (``fixed``: explicit examples only, D-400); *seed_only* runs only the tests
    citing the seed MUSTs it breaks (tests/test_fixed_examples.py)."""
    _init()
    from dsh_conformance import runner
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.rows import requirement_rows
    from dsh_conformance.reporting.verdict import verdicts
    from dsh_conformance.spec import load_catalog
    from zoo import members

    entry = next(e for e in members() if f"{e.area}:{e.factory}" == key)
    catalog = load_catalog().requirements
    # The seed MUST sentences the member breaks: the seed verdict must fail on each of
    # them, by its own id (issue 25); a member breaking only decisions has none.
    seed_kills = sorted(
        k for k in entry.kills if catalog[k].verdict == "seed" and catalog[k].level == "MUST"
    )
    options = runner.RunOptions(
        adapter=entry.adapter,
        requirements=seed_kills if seed_only else entry.filters.requirements,
        capabilities=entry.filters.capabilities,
        keyword=entry.filters.keyword,
        hypothesis_profile=profile,
        seed=SEED,
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dsh-zoo-") as tmp:
        path = Path(tmp) / "record.jsonl"
        status = runner.run(options, path, plugins=[_NativeTracebacks()])
        record = load_record(path)
    seconds = time.perf_counter() - started
    rows = requirement_rows(record)
    failing = {row.id: _functions(row.failing) for row in rows if row.status == "fail"}
    outcomes: dict[str, int] = {}
    for test in record.tests:
        outcomes[str(test.outcome)] = outcomes.get(str(test.outcome), 0) + 1
    blamed_with: dict[str, bool] = {}
    for test in record.tests:
        if test.failed:
            blamed = set(test.blame or test.requirements)
            for rid in blamed - entry.kills:
                independent = not (blamed & entry.kills)
                blamed_with[rid] = blamed_with.get(rid, False) or independent
    missed = sorted(entry.kills - failing.keys())
    seed_verdict, _profile = verdicts(record, rows)
    collateral = sorted(failing.keys() - entry.kills)
    return {
        "member": key,
        "name": entry.name,
        "area": entry.area,
        "invariant": entry.invariant,
        "kills": sorted(entry.kills),
        "gap": entry.gap,
        "killed": status != 0 and bool(failing),
        "on_target": not missed,
        "seed_kills": seed_kills,
        "seed_on_target": bool(seed_kills) and set(seed_kills) <= set(seed_verdict.failing),
        "missed": missed,
        "failing": sorted(failing),
        "collateral": collateral,
        "unexpected": sorted(
            c for c in collateral if c not in entry.collateral_ok and not c.startswith("REF-")
        ),
        # Collateral some test blamed without blaming any of the member's own ids (a test
        # that blames every id it cites when one check fails is not "independent").
        "independent": sorted(
            c for c in collateral if blamed_with.get(c, True) and not c.startswith("REF-")
        ),
        "killed_by": failing,
        "tests": len(record.tests),
        "outcomes": dict(sorted(outcomes.items())),
        "seconds": round(seconds, 1),
    }


def run_zoo(
    keys: Sequence[str] | None = None,
    workers: int = 2,
    profile: str = PROFILE,
    seed_only: bool = False,
) -> list[dict[str, Any]]:
    """Run *keys* (default: every member) in *workers* processes under *profile* (and
    *seed_only*, see ``run_member``); results in zoo order."""
    _init()
    from zoo import members

    todo = list(keys) if keys else [f"{e.area}:{e.factory}" for e in members()]
    run = functools.partial(run_member, profile=profile, seed_only=seed_only)
    if workers <= 1:
        return [run(k) for k in todo]
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_init) as pool:
        return list(pool.map(run, todo))


@functools.cache
def _shared_pool(profile: str) -> ProcessPoolExecutor:
    pool = ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=_init)
    atexit.register(pool.shutdown)
    return pool


def run_shared(
    keys: Sequence[str], profile: str = PROFILE, seed_only: bool = False
) -> list[dict[str, Any]]:
    """Run *keys* one after another in this process's one spawned worker for *profile*,
    which every test module running members under it shares (the zoo's area files; the
    fixed examples): under ``-n 2 --dist loadfile`` the modules spread over the xdist
    workers, each keeps one process busy and starts it once.

    One worker per profile, never one for all: a test module's ``@settings`` takes every
    setting it does not name from the profile loaded when the module is first imported,
    so in a process whose first run was ``fixed`` the later runs' properties would keep
    the explicit phase alone and generate nothing."""
    run = functools.partial(run_member, profile=profile, seed_only=seed_only)
    return list(_shared_pool(profile).map(run, keys))
