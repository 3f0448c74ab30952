"""The pytest plugin: adapter selection, requirement traceability, Hypothesis profiles.

Loaded in every pytest run of an environment where dsh-conformance is installed, so it
imports nothing heavy at module level: the catalog and adapters load only when a run
collects conformance tests.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from dsh_conformance.adapters.client import Implementation
    from dsh_conformance.guard import FaultGuard
    from dsh_conformance.spec import Requirement

IMPLEMENTATION_KEY = pytest.StashKey["Implementation"]()
ORACLE_KEY = pytest.StashKey["Implementation"]()

#: Hypothesis profiles: ``quick`` for parity and smoke-level runs (few examples, the same
#: ones every time), ``dev`` is fast, ``ci`` derandomized with more examples.
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 10, "deadline": None, "derandomize": True, "database": None},
    "dev": {"max_examples": 60, "deadline": None},
    "ci": {"max_examples": 200, "deadline": None, "derandomize": True, "print_blob": True},
    "thorough": {"max_examples": 2000, "deadline": None},
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dsh-conformance")
    group.addoption(
        "--dsh-adapter",
        default=os.environ.get("DSH_ADAPTER", "reference"),
        help="implementation under test: reference, subprocess:CMD, upstream, "
        "python:MODULE:FACTORY (default: reference, or $DSH_ADAPTER)",
    )
    group.addoption(
        "--dsh-record",
        default=None,
        help="write a JSON Lines run record (one line per test, written as it finishes)",
    )
    group.addoption(
        "--dsh-expectations",
        default=None,
        help="expectation manifest (TOML): requirement/test ids expected to fail or be unsupported",
    )
    group.addoption(
        "--dsh-write-expectations",
        default=None,
        metavar="PATH",
        help="write an expectation manifest for the failures of this run",
    )
    group.addoption(
        "--dsh-spec-profile",
        default="seed",
        choices=("seed", "release"),
        help="run the tests of requirements in this profile (default: seed)",
    )
    group.addoption(
        "--dsh-requirement",
        action="append",
        default=[],
        metavar="ID",
        help="run only tests citing this requirement id (glob, repeatable: URI-*)",
    )
    group.addoption(
        "--dsh-capability",
        action="append",
        default=[],
        metavar="NAME",
        help="run only tests needing this capability (repeatable)",
    )
    group.addoption(
        "--dsh-require",
        action="append",
        default=[],
        metavar="NAME",
        help="fail the run unless the implementation declares this capability (repeatable)",
    )
    group.addoption(
        "--dsh-allow-empty",
        action="store_true",
        default=False,
        help="let a run in which no applicable test ran pass (default: it fails, D-175)",
    )
    group.addoption(
        "--dsh-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="per-call timeout of subprocess adapters (default 30)",
    )
    group.addoption(
        "--dsh-resume",
        default=None,
        metavar="RECORD",
        help="continue an interrupted run: skip the tests RECORD has, carry its results over",
    )
    group.addoption(
        "--dsh-last-failed",
        default=None,
        metavar="RECORD",
        help="run only the tests that failed in RECORD",
    )
    group.addoption(
        "--dsh-validate",
        action="store_true",
        default=False,
        help="check every protocol message of subprocess adapters against the schemas",
    )


def register_profiles() -> None:
    """Make the suite's Hypothesis profiles loadable by name."""
    from hypothesis import settings

    for name, values in PROFILES.items():
        settings.register_profile(name, **values)


@pytest.hookimpl(tryfirst=True)  # profiles exist before Hypothesis loads --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    from dsh_conformance.harness import HarnessPlugin

    config.addinivalue_line(
        "markers", "req(*ids): requirement ids from spec/ that this test checks"
    )
    config.addinivalue_line("markers", "capability(name): adapter capability the test needs")
    config.addinivalue_line(
        "markers",
        "differential: compares the implementation with the reference model (identity); "
        "not run when the implementation is the reference model itself",
    )
    config.pluginmanager.register(HarnessPlugin(config), "dsh-harness")
    from dsh_conformance import parallel

    if parallel.is_controller(config):
        config.pluginmanager.register(parallel.ControllerPlugin(config), "dsh-parallel")

    for name, values in PROFILES.items():
        settings.register_profile(name, **values)
    if not config.getoption("hypothesis_profile", None):
        default = "ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "dev"
        settings.load_profile(os.environ.get("DSH_HYPOTHESIS_PROFILE", default))


@cache
def conformance_root() -> Path:
    import dsh_conformance.conformance as pkg

    return Path(pkg.__file__).resolve().parent


@cache
def resolved(path: str) -> Path:
    """``Path(path).resolve()``, once per path: a collection asks for each of ~500 items
    several times, and resolving is a syscall per component."""
    return Path(path).resolve()


def is_conformance_item(item: pytest.Item) -> bool:
    return conformance_root() in resolved(str(item.path)).parents


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids an item declares through ``@pytest.mark.req``."""
    ids: list[str] = []
    for mark in item.iter_markers("req"):
        ids.extend(str(a) for a in mark.args)
    return sorted(set(ids))


def check_traceability(items: Sequence[pytest.Item], catalog: Mapping[str, Requirement]) -> None:
    """Every conformance test cites known requirement ids (else a usage error)."""
    problems: list[str] = []
    for item in items:
        ids = requirement_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: declares no requirement (add @pytest.mark.req(...))")
        unknown = [i for i in ids if i not in catalog]
        if unknown:
            problems.append(
                f"{item.nodeid}: cites unknown requirement id(s) {', '.join(unknown)} "
                "(add them to spec/requirements/*.toml or fix the id)"
            )
    if problems:
        raise pytest.UsageError("requirement traceability failed:\n  " + "\n  ".join(problems))


def implementation(config: pytest.Config) -> Implementation:
    """The implementation under test, created on first use and kept for the session."""
    if IMPLEMENTATION_KEY not in config.stash:
        from dsh_conformance.adapters.client import Implementation
        from dsh_conformance.adapters.registry import resolve
        from dsh_conformance.guard import FaultGuard
        from dsh_conformance.harness import GUARD_KEY

        name = str(config.getoption("--dsh-adapter"))
        adapter = resolve(name)
        timeout = config.getoption("dsh_timeout", None)
        if timeout is not None and hasattr(adapter, "timeout"):
            adapter.timeout = float(timeout)
        if not hasattr(adapter, "argv"):  # in-process: a hang must not stop the run (D-164)
            from dsh_conformance.adapters.deadline import DEFAULT_TIMEOUT, InProcessDeadline

            adapter = InProcessDeadline(
                adapter, float(timeout) if timeout is not None else DEFAULT_TIMEOUT
            )
        if config.getoption("dsh_validate", False) and hasattr(adapter, "validate"):
            adapter.validate = True
        guarded = FaultGuard(adapter)
        config.stash[GUARD_KEY] = guarded
        config.stash[IMPLEMENTATION_KEY] = Implementation(guarded, name)
    return config.stash[IMPLEMENTATION_KEY]


def guard(config: pytest.Config) -> FaultGuard | None:
    """The fault guard around the implementation under test, once it exists."""
    from dsh_conformance.harness import GUARD_KEY

    return config.stash.get(GUARD_KEY, None)


def oracle(config: pytest.Config) -> Implementation:
    """The reference model, always in-process: the oracle for differential tests."""
    if ORACLE_KEY not in config.stash:
        from dsh_conformance.adapters.client import Implementation
        from dsh_conformance.adapters.reference import ReferenceAdapter

        config.stash[ORACLE_KEY] = Implementation(ReferenceAdapter(), "reference", validate=False)
    return config.stash[ORACLE_KEY]


#: The name the reference model gives in its handshake, in-process or served.
REFERENCE_NAME = "dsh-conformance reference model"
SELF_COMPARISON = "self-comparison: the implementation is the reference model"


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not is_conformance_item(item):
        return
    if item.get_closest_marker("differential") is not None:
        impl = implementation(item.config)
        if impl.handshake.implementation.name == REFERENCE_NAME:
            pytest.skip(SELF_COMPARISON)
    needed = [str(m.args[0]) for m in item.iter_markers("capability")]
    if needed:
        impl = implementation(item.config)
        missing = [c for c in needed if not impl.supports(c)]
        if missing:
            pytest.skip(f"unsupported: the implementation does not declare {', '.join(missing)}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Every check of a conformance test runs (D-250): soft checks collected per
    example.  A Hypothesis test collects around each example (its inner test), so the
    engine sees each example's failures; a state machine stops at its first failure
    (later steps would run on a state already wrong); other tests collect around the
    call."""
    if not is_conformance_item(item):
        return (yield)
    from dsh_conformance.checks import collect, collecting

    test: Any = getattr(item, "obj", None)
    hypothesis = getattr(test, "hypothesis", None)
    if hypothesis is not None:
        hypothesis.inner_test = collecting(hypothesis.inner_test)
        return (yield)
    code = getattr(test, "__code__", None)
    if code is not None and "run_state_machine_as_test" in code.co_names:
        return (yield)
    with collect():
        return (yield)


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in (IMPLEMENTATION_KEY, ORACLE_KEY):
        if key in config.stash:
            config.stash[key].close()
