"""The pytest plugin: adapter selection, requirement traceability, Hypothesis profiles.

Loaded in every pytest run of an environment where dsh-conformance is installed, so it
imports nothing heavy at module level: the catalog and adapters load only when a run
collects conformance tests.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dsh_conformance.adapters.client import Implementation

IMPLEMENTATION_KEY = pytest.StashKey["Implementation"]()
ORACLE_KEY = pytest.StashKey["Implementation"]()

#: Hypothesis profiles: ``dev`` is fast, ``ci`` derandomized with more examples.
PROFILES: dict[str, dict[str, Any]] = {
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


def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    for name, values in PROFILES.items():
        settings.register_profile(name, **values)
    if not config.getoption("hypothesis_profile", None):
        default = "ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "dev"
        settings.load_profile(os.environ.get("DSH_HYPOTHESIS_PROFILE", default))


def conformance_root() -> Path:
    import dsh_conformance.conformance as pkg

    return Path(pkg.__file__).resolve().parent


def is_conformance_item(item: pytest.Item) -> bool:
    return conformance_root() in Path(str(item.path)).resolve().parents


def requirement_ids(item: pytest.Item) -> list[str]:
    """The requirement ids an item declares through ``@pytest.mark.req``."""
    ids: list[str] = []
    for mark in item.iter_markers("req"):
        ids.extend(str(a) for a in mark.args)
    return sorted(set(ids))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    conformance = [item for item in items if is_conformance_item(item)]
    if not conformance:
        return
    from dsh_conformance.spec import load_catalog

    catalog = load_catalog()
    problems: list[str] = []
    for item in conformance:
        ids = requirement_ids(item)
        if not ids:
            problems.append(f"{item.nodeid}: declares no requirement (add @pytest.mark.req(...))")
        unknown = [i for i in ids if i not in catalog.requirements]
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

        name = str(config.getoption("--dsh-adapter"))
        config.stash[IMPLEMENTATION_KEY] = Implementation(resolve(name), name)
    return config.stash[IMPLEMENTATION_KEY]


def oracle(config: pytest.Config) -> Implementation:
    """The reference model, always in-process: the oracle for differential tests."""
    if ORACLE_KEY not in config.stash:
        from dsh_conformance.adapters.client import Implementation
        from dsh_conformance.adapters.reference import ReferenceAdapter

        config.stash[ORACLE_KEY] = Implementation(ReferenceAdapter(), "reference")
    return config.stash[ORACLE_KEY]


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not is_conformance_item(item):
        return
    needed = [str(m.args[0]) for m in item.iter_markers("capability")]
    if needed:
        impl = implementation(item.config)
        missing = [c for c in needed if not impl.supports(c)]
        if missing:
            pytest.skip(f"unsupported: the implementation does not declare {', '.join(missing)}")


def pytest_unconfigure(config: pytest.Config) -> None:
    for key in (IMPLEMENTATION_KEY, ORACLE_KEY):
        if key in config.stash:
            config.stash[key].close()
