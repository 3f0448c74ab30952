"""A verdict that depends on the implementation alone (issue 41 item 4, D-420..D-422).

Before issue 41 the published rc.8 set failed PROJ-001 (and the profile's RET-006,
RET-008) without its manifest and passed them with it (an expected test was not shrunk,
so another example was its last), and its gate with the manifest exited 1 on seeds 1, 2,
8 and 12345 (a property expected to fail met no partial reply there).  Here one
implementation runs under both Hypothesis profiles at several seeds, with and without a
manifest, and must fail one set of seed MUSTs every time, with a green gate under the
manifest: rc.8 (its built-in manifest) on the projection, retention and partial-reply
properties whose verdict flapped; two zoo members and the independent host (a manifest
``--write-expectations`` wrote from their first run) on those of the three that cite
what they break.

Which wrong implementation does it catch?  A harness whose manifest changes what a test
runs (the old D-183), or a property whose failing requirement is the luck of its
examples.  Which conforming one could it wrongly fail?  None: it asserts no verdict of
its own, only that the verdict is the same on every run (the sets are the ones measured).

Cheap by construction (about 35 s of one CI worker, measured in the issue 41 report):
each run selects at most three tests, in this process (``runner.run``); a property that
fails does so on its fixed examples (issue 41 item 2), so nothing is generated or shrunk
for it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import pytest
from attrs import evolve, frozen

sys.path.insert(0, str(Path(__file__).parent))
from test_upstream_conformance import needs_upstream  # noqa: F401 (a fixture)
from zoo import members

from dsh_conformance import runner
from dsh_conformance.adapters.expectations import builtin_manifest
from dsh_conformance.options import RunOptions
from dsh_conformance.record import load_record
from dsh_conformance.reporting.exitstatus import run_exit_status
from dsh_conformance.reporting.gate import gate_of
from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.reporting.verdict import verdicts

#: The properties whose failing requirements depended on the seed or the manifest.
PROPERTIES: Final = (
    "conformance/test_projection.py::test_projection_keeps_exactly_what_the_seed_keeps",
    "conformance/test_retention.py::test_retention_properties",
    "conformance/test_scenario_partial.py::test_no_generated_run_projects_a_partial_reply",
)
#: What rc.8 breaks of what they cite, the same on every run (a subset of the whole
#: suite's ``RC8_SEED_FAILING``, tests/test_fixed_examples.py).
RC8_FAILING: Final = frozenset({"PROJ-001", "PROJ-004", "RET-003"})
#: 1, 2, 8 and 12345 are the seeds whose gate was red before issue 41.
RC8_SEEDS: Final = (1, 2, 8, 12345)
SEEDS: Final = (1, 2, 3)
PROFILES: Final = ("dev", "ci")
#: Zoo members (area:Factory) and the seed MUSTs they fail on the properties citing
#: their kills: a projection that keeps injected context, a slice that keeps one end.
ZOO: Final = {
    "projection:InjectedContextProjected": frozenset({"PROJ-004"}),
    "retention:HeadOnlySlices": frozenset({"RET-003"}),
}
INDEPENDENT_HOST: Final = "independent host"
HOST_ADAPTER: Final = (
    f"subprocess:{sys.executable} {Path(__file__).parent / 'independent_host' / 'host.py'}"
)


@frozen
class Run:
    """What one run concluded."""

    profile: str
    seed: int
    manifest: bool
    seed_failing: frozenset[str]
    exit_status: int
    gate_passed: bool


def _run(options: RunOptions, folder: Path) -> Run:
    """One run of *options* in this process, Hypothesis' own profile put back after."""
    from hypothesis import settings

    current = settings.get_current_profile_name()
    path = folder / "record.jsonl"
    try:
        runner.run(options, path)
    finally:
        settings.load_profile(current)
    record = load_record(path)
    assert record.footer is not None
    assert record.footer.get("status") == "complete", record.footer
    seed_verdict, _ = verdicts(record, requirement_rows(record))
    assert isinstance(options.seed, int)
    assert options.hypothesis_profile
    return Run(
        options.hypothesis_profile,
        options.seed,
        options.expectations is not None,
        frozenset(seed_verdict.failing),
        run_exit_status(record, "seed"),
        gate_of(record, "seed").passed,
    )


def _matrix(
    options: RunOptions,
    seeds: Sequence[int],
    manifest: Path | None,
    where: Path,
    profiles: Sequence[str] = PROFILES,
) -> Iterator[Run]:
    """Every profile × seed, without and with *manifest*, each run in a folder of
    *where*; without a manifest, the first run writes one (``--write-expectations``)
    for the runs after it."""
    for profile in profiles:
        for seed in seeds:
            given = evolve(options, hypothesis_profile=profile, seed=seed)
            off = where / f"{profile}-{seed}-off"
            off.mkdir()
            if manifest is None:
                manifest = where / "written.toml"
                yield _run(evolve(given, write_expectations=str(manifest)), off)
            else:
                yield _run(given, off)
            on = where / f"{profile}-{seed}-on"
            on.mkdir()
            yield _run(evolve(given, expectations=str(manifest)), on)


def _table(runs: Sequence[Run]) -> str:
    return "\n".join(
        f"{r.profile} seed {r.seed} manifest {'on ' if r.manifest else 'off'}: "
        f"{sorted(r.seed_failing)} exit {r.exit_status}"
        for r in runs
    )


@pytest.fixture(scope="module")
def rc8_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    request.getfixturevalue("needs_upstream")  # skipped without Node, failed under CI=true
    manifest = builtin_manifest("upstream")
    assert manifest is not None
    options = RunOptions(adapter="upstream", tests=PROPERTIES)
    where = tmp_path_factory.mktemp("rc8")
    return list(_matrix(options, RC8_SEEDS, Path(manifest), where))


@pytest.fixture(scope="module")
def other_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Run]]:
    chosen = {f"{e.area}:{e.factory}": e for e in members()}
    cases = {
        key: RunOptions(
            adapter=chosen[key].adapter, tests=PROPERTIES, requirements=sorted(chosen[key].kills)
        )
        for key in ZOO
    }
    cases[INDEPENDENT_HOST] = RunOptions(adapter=HOST_ADAPTER, tests=PROPERTIES)
    where = {key: tmp_path_factory.mktemp("determinism") for key in cases}
    runs: dict[str, list[Run]] = {key: [] for key in cases}
    # profile by profile, so the suite is imported again only when the profile changes
    # (D-512); each implementation's first run writes the manifest the others read
    for profile in PROFILES:
        for key, options in cases.items():
            written = where[key] / "written.toml"
            manifest = written if written.exists() else None
            runs[key] += _matrix(options, SEEDS, manifest, where[key], (profile,))
    return runs


def test_rc8_fails_one_set_of_seed_musts_on_every_profile_seed_and_manifest(
    rc8_runs: list[Run],
) -> None:
    from test_fixed_examples import RC8_SEED_FAILING

    assert len(rc8_runs) == len(PROFILES) * len(RC8_SEEDS) * 2
    assert {r.seed_failing for r in rc8_runs} == {RC8_FAILING}, _table(rc8_runs)
    assert RC8_FAILING <= RC8_SEED_FAILING


def test_rc8_passes_its_gate_on_every_run_with_the_builtin_manifest(rc8_runs: list[Run]) -> None:
    with_manifest = [r for r in rc8_runs if r.manifest]
    assert all(r.exit_status == 0 and r.gate_passed for r in with_manifest), _table(rc8_runs)
    # without it the same failures are unexpected: the manifest moves the gate, nothing else
    assert all(r.exit_status == 1 for r in rc8_runs if not r.manifest), _table(rc8_runs)


@pytest.mark.parametrize("key", [*ZOO, INDEPENDENT_HOST])
def test_a_verdict_is_the_same_on_every_profile_seed_and_manifest(
    other_runs: dict[str, list[Run]], key: str
) -> None:
    runs = other_runs[key]
    assert len(runs) == len(PROFILES) * len(SEEDS) * 2
    expected = ZOO.get(key, frozenset())  # the host passes its seed verdict (issue 36)
    assert {r.seed_failing for r in runs} == {expected}, _table(runs)
    assert all(r.exit_status == 0 and r.gate_passed for r in runs if r.manifest), _table(runs)
