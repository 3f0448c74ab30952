"""Every run in one process has its own Hypothesis profile on every property (D-512).

A property's ``@settings`` takes what it does not name from the profile loaded when its
module is imported; the suite's modules were imported once per process, so a ``fixed``
run after a ``dev`` one generated examples (and a ``dev`` run after a ``fixed`` one
none): the in-process proofs of tests/test_fixed_examples.py and
tests/test_verdict_determinism.py ran under the profile of whatever ran first.

Which wrong harness does it catch?  One that lets an earlier run's profile decide a later
run's phases.  Which conforming one could it wrongly fail?  None: it reads only the
settings each run's collection gives a property.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import Phase

from dsh_conformance import runner
from dsh_conformance.options import RunOptions

#: A property with its own ``@settings(max_examples=...)``, naming no phases.
PROPERTY = "test_retention_properties"


class _Phases:
    """The phases the run's collection gives PROPERTY."""

    def __init__(self) -> None:
        self.seen: list[tuple[Phase, ...]] = []

    def pytest_itemcollected(self, item: Any) -> None:
        if item.name == PROPERTY:
            self.seen.append(tuple(item.obj._hypothesis_internal_use_settings.phases))


def _phases(profile: str, where: Path) -> tuple[Phase, ...]:
    watch = _Phases()
    # nothing selected: collection alone gives the settings, no test runs
    options = RunOptions(keyword="no_test_is_named_this", hypothesis_profile=profile, seed=1)
    runner.run(options, where / f"{profile}-{len(list(where.iterdir()))}.jsonl", [watch])
    assert len(watch.seen) == 1, watch.seen
    return watch.seen[0]


def test_each_run_of_a_process_has_its_own_profile_on_a_decorated_property(
    tmp_path: Path,
) -> None:
    from hypothesis import settings

    current = settings.get_current_profile_name()
    try:
        assert _phases("fixed", tmp_path) == (Phase.explicit,)
        assert Phase.generate in _phases("dev", tmp_path)
        assert _phases("fixed", tmp_path) == (Phase.explicit,)
    finally:
        settings.load_profile(current)


def test_runs_under_one_profile_import_the_suite_once(tmp_path: Path) -> None:
    """The cost stays where it was: only a change of profile imports the suite again."""
    import sys

    from hypothesis import settings

    current = settings.get_current_profile_name()
    try:
        _phases("fixed", tmp_path)
        before = {k: id(m) for k, m in sys.modules.items() if k.startswith("conformance.")}
        _phases("fixed", tmp_path)
        after = {k: id(m) for k, m in sys.modules.items() if k.startswith("conformance.")}
    finally:
        settings.load_profile(current)
    assert before
    assert before == after
