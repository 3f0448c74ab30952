"""Every property of the suite runs as many examples as the run's profile says (D-492, D-493).

A property or state machine with its own count (``max_examples=examples(K)``) runs K under
``ci`` and its share of any other profile's count, or of ``--max-examples N``: ceil(K x m /
200).  A property without its own count is the K = 200 case.  So one rule holds for every
property the suite collects and every machine it runs, and ``ci`` keeps today's counts
(the committed reports are made under it).

Which wrong suite does it catch?  A property or machine whose count bypasses the profile
(a bare ``max_examples=100`` again: ``quick`` would run 100, not 5), a machine that
``--max-examples`` does not reach, a ci count that moved (the reports would change), a
helper that scales the step count or rounds down to zero.  Which conforming one could it
wrongly fail?  None: it reads the settings each run's collection and each machine's call
receive, and runs no example.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from dsh_conformance import runner
from dsh_conformance.options import RunOptions
from dsh_conformance.profiles import PROFILES, examples, register_profiles

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))

#: A passing host the suite does not take for the reference: its machines run, not skip.
OTHER = "python:bench_run:renamed_reference"
#: Selects the suite's state machines (each must be one; see test_every_machine_is_seen).
MACHINES = "state_machine or sessions_stateful"
CI = PROFILES["ci"]["max_examples"]

#: Today's counts under ci of every property and machine with its own count (all other
#: properties run ci's 200): the committed reports were made with these.
AT_CI = {
    "test_inbox_stateful.py::test_inbox_ownership_state_machine": 100,
    "test_inbox_stateful.py::test_inbox_placement_state_machine": 100,
    "test_side_stateful.py::test_side_sessions_stateful": 30,
    "test_projection.py::test_matches_reference_model": 50,
    "test_retention.py::test_retention_properties": 150,
    "test_retention.py::test_matches_reference_model_byte_for_byte": 80,
    "test_placement.py::test_without_prefix_contexts_every_context_follows_the_prompt": 40,
    "test_placement.py::test_prefix_contexts_are_baked_into_the_prompt_event": 60,
    "test_placement.py::test_drained_steering_gets_the_same_split": 40,
    "test_prepare.py::test_context_framing_and_data": 100,
    "test_prepare.py::test_each_source_is_retained_independently": 40,
    "test_prepare.py::test_all_or_nothing_under_every_fault": 150,
    "test_prepare.py::test_later_source_changes_do_not_reach_the_prepared_context": 60,
    "test_prepare.py::test_matches_reference_model": 60,
    "test_side.py::test_a_long_model_handback_is_truncated_head_tail_within_the_cap": 40,
    "test_side.py::test_an_explicit_handback_is_never_altered": 20,
    "test_side.py::test_truncation_matches_reference_model": 30,
    "test_side.py::test_interleaving_commutes": 25,
}


def _share(at_ci: int, base: int) -> int:
    """The rule written out here independently of the helper: ceil, at least one."""
    whole, part = divmod(at_ci * base, CI)
    return max(1, whole + (part > 0))


class _Counts:
    """What a run gives each property at collection and each machine when it is called
    (the machine's ``run_state_machine_as_test`` is replaced for the call: no program runs)."""

    def __init__(self) -> None:
        self.properties: dict[str, int] = {}
        self.machines: dict[str, tuple[int, int]] = {}
        self.machine_tests: set[str] = set()

    def pytest_itemcollected(self, item: Any) -> None:
        obj = getattr(item, "obj", None)
        chosen = getattr(obj, "_hypothesis_internal_use_settings", None)
        if getattr(obj, "is_hypothesis_test", False) and chosen is not None:
            self.properties[item.nodeid] = chosen.max_examples
        elif "run_state_machine_as_test" in getattr(getattr(obj, "__code__", None), "co_names", ()):
            self.machine_tests.add(item.nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: Any) -> Iterator[None]:
        module = item.module
        real = module.run_state_machine_as_test

        def record(factory: Any, *, settings: Any, **_: Any) -> None:
            self.machines[item.nodeid] = (settings.max_examples, settings.stateful_step_count)

        module.run_state_machine_as_test = record
        try:
            return (yield)
        finally:
            module.run_state_machine_as_test = real


def _counts(where: Path, profile: str, max_examples: int | None = None) -> _Counts:
    seen = _Counts()
    options = RunOptions(
        adapter=OTHER,
        keyword=MACHINES,
        hypothesis_profile=profile,
        max_examples=max_examples,
        seed=1,
    )
    current = settings.get_current_profile_name()
    try:
        runner.run(options, where / f"{profile}-{max_examples}.jsonl", [seen])
    finally:
        register_profiles()  # the run registered them with its --max-examples
        settings.load_profile(current)
    assert seen.properties, "the run collected no property"
    assert seen.machines, "the run called no state machine"
    return seen


def _name(nodeid: str) -> str:
    """``FILE::TEST`` of a node id, without the directory and the parameters."""
    return nodeid.rsplit("/", 1)[-1].split("[", 1)[0]


@pytest.fixture(scope="module")
def at_ci(tmp_path_factory: pytest.TempPathFactory) -> _Counts:
    return _counts(tmp_path_factory.mktemp("ci"), "ci")


def test_examples_keeps_every_ci_count_and_scales_the_others_up() -> None:
    current = settings.get_current_profile_name()
    try:
        for name, values in PROFILES.items():
            settings.load_profile(name)
            got = [examples(k) for k in range(1, 2 * CI + 1)]
            assert got == [_share(k, values["max_examples"]) for k in range(1, 2 * CI + 1)]
        settings.load_profile("ci")
        assert [examples(k) for k in (1, 30, 100, 200, 333)] == [1, 30, 100, 200, 333]
        settings.load_profile("quick")
        assert [examples(k) for k in (1, 20, 25, 30, 100, 150)] == [1, 1, 2, 2, 5, 8]
    finally:
        settings.load_profile(current)


def test_ci_counts_are_todays(at_ci: _Counts) -> None:
    """The counts the committed reports were made with: a weighted property keeps its own,
    every other property ci's 200, and a machine its count and its steps."""
    for nodeid, count in at_ci.properties.items():
        assert count == AT_CI.get(_name(nodeid), CI), nodeid
    assert {_name(n): c for n, c in at_ci.machines.items()} == {
        "test_inbox_stateful.py::test_inbox_ownership_state_machine": (100, 30),
        "test_inbox_stateful.py::test_inbox_placement_state_machine": (100, 30),
        "test_side_stateful.py::test_side_sessions_stateful": (30, 40),
    }
    named = {_name(n) for n in [*at_ci.properties, *at_ci.machines]}
    assert set(AT_CI) <= named, set(AT_CI) - named


def test_every_machine_is_seen(at_ci: _Counts) -> None:
    """Each test that runs a state machine is among those selected and was called."""
    assert at_ci.machine_tests == set(at_ci.machines)


@pytest.mark.parametrize(
    ("profile", "max_examples"),
    [("quick", None), ("dev", None), ("thorough", None), ("quick", 1), ("ci", 400)],
)
def test_every_count_is_its_share_of_the_profile(
    at_ci: _Counts, tmp_path: Path, profile: str, max_examples: int | None
) -> None:
    """No property or machine runs more (or fewer) than its ci count's share of the
    run's count: the profile's, or ``--max-examples`` (the base the weights scale)."""
    base = max_examples or PROFILES[profile]["max_examples"]
    got = _counts(tmp_path, profile, max_examples)
    assert set(got.properties) == set(at_ci.properties)
    for nodeid, count in got.properties.items():
        assert count == _share(at_ci.properties[nodeid], base), nodeid
    assert got.machines == {
        nodeid: (_share(count, base), steps) for nodeid, (count, steps) in at_ci.machines.items()
    }
