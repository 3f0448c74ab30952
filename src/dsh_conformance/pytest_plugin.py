"""The pytest plugin: adapter selection, requirement traceability, Hypothesis profiles.

Loaded in every pytest run of an environment where dsh-conformance is installed, so it
imports nothing heavy at module level: the catalog and adapters load only when a run
collects conformance tests.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from dsh_conformance.profiles import EXPLICIT_ONLY, PROFILES, register_profiles  # re-exported
from dsh_conformance.suite import (  # re-exported: conftest and runner read them here
    IMPLEMENTATION_KEY,
    ORACLE_KEY,
    REFERENCE_NAME,
    SELF_COMPARISON,
    check_traceability,
    conformance_root,
    guard,
    implementation,
    is_conformance_item,
    oracle,
    requirement_ids,
    resolved,
)

__all__ = [
    "EXPLICIT_ONLY",
    "IMPLEMENTATION_KEY",
    "ORACLE_KEY",
    "PROFILES",
    "REFERENCE_NAME",
    "SELF_COMPARISON",
    "check_traceability",
    "conformance_root",
    "guard",
    "implementation",
    "is_conformance_item",
    "oracle",
    "register_profiles",
    "requirement_ids",
    "resolved",
]


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
        "--dsh-test",
        action="append",
        default=[],
        metavar="ID",
        help="run only this test (its full id, conformance/FILE::NAME[PARAM]; repeatable)",
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
        help="seconds to wait for each reply, the handshake included (default 30)",
    )
    group.addoption(
        "--dsh-max-examples",
        type=int,
        default=None,
        metavar="N",
        help="Hypothesis examples per property test; a weighted one scales from it (D-493)",
    )
    group.addoption(
        "--dsh-handshake-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds to wait for the handshake of a subprocess adapter (default: --dsh-timeout)",
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


@pytest.hookimpl(tryfirst=True)  # profiles exist before Hypothesis loads --hypothesis-profile
def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    from dsh_conformance.harness.plugin import HarnessPlugin

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

    from dsh_conformance.options import of_config

    options = of_config(config)
    register_profiles(options.max_examples)
    if not options.hypothesis_profile:
        default = "ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "dev"
        settings.load_profile(os.environ.get("DSH_HYPOTHESIS_PROFILE", default))


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
