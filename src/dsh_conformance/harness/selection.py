"""Which collected conformance tests run, and what the harness knows of each.

A test runs when one of the requirements it cites is in the run's spec profile and it
passes every filter of the run's options: ``-r`` globs over its requirement ids, ``-c``
capabilities, ``--test`` exact ids, and for ``--resume``/``--last-failed`` the earlier
record (D-137).  Everything else is deselected, as pytest's own ``-k`` does.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from attrs import field, frozen

from dsh_conformance import suite
from dsh_conformance.errors import HarnessError
from dsh_conformance.outcomes import FAILING

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Entry
    from dsh_conformance.options import RunOptions
    from dsh_conformance.record import TestResult
    from dsh_conformance.spec import Requirement


@frozen
class ItemMeta:
    """What the harness knows about one selected conformance test."""

    test_id: str
    requirements: tuple[str, ...]
    capabilities: tuple[str, ...]
    entry: Entry | None
    #: A Hypothesis test: its examples may meet a failure or not (D-422).
    property: bool = False


@frozen
class Earlier:
    """The earlier record a run follows: ``--resume`` carries its results over,
    ``--last-failed`` runs only its failures (``rerun``; None when not given)."""

    carried: Mapping[str, TestResult] = field(factory=dict)
    rerun: frozenset[str] | None = None

    def done(self, test_id: str) -> bool:
        """Whether *test_id* is not to run again: carried over, or not a failure to rerun."""
        if test_id in self.carried:
            return True
        return self.rerun is not None and test_id not in self.rerun


def load_earlier(options: RunOptions) -> Earlier:
    """Read ``--resume`` / ``--last-failed`` before this run's record exists (it may be
    the same file); an unreadable record is a usage error."""
    from dsh_conformance.record import load_record

    carried: dict[str, TestResult] = {}
    rerun: frozenset[str] | None = None
    try:
        if options.resume:
            carried = {t.nodeid: t for t in load_record(options.resume).tests}
        if options.last_failed:
            tests = load_record(options.last_failed).tests
            rerun = frozenset(t.nodeid for t in tests if t.outcome in FAILING)
    except HarnessError as exc:
        raise pytest.UsageError(str(exc)) from exc
    return Earlier(carried, rerun)


def wanted(
    requirements: Sequence[str],
    capabilities: Sequence[str],
    options: RunOptions,
    catalog: Mapping[str, Requirement],
) -> bool:
    """Whether a test citing *requirements* and needing *capabilities* is in the run's
    spec profile and passes its ``-r`` and ``-c`` filters."""
    if not any(options.spec_profile in catalog[r].profiles for r in requirements):
        return False
    patterns = options.requirements
    if patterns and not any(fnmatch.fnmatchcase(r, p) for r in requirements for p in patterns):
        return False
    return not options.capabilities or bool(set(options.capabilities).intersection(capabilities))


def covers_package(items: Sequence[pytest.Item], root: Path) -> bool:
    """Whether *items* come from every test file of the conformance package (only such
    a collection can call a manifest entry that matches nothing stale)."""
    files = {suite.resolved(str(item.path)) for item in items}
    return all(path.resolve() in files for path in root.rglob("test_*.py"))


@frozen
class Selection:
    """The outcome of selecting: the items kept (conformance or not), those removed,
    and the harness's knowledge of each selected conformance test by pytest node id."""

    kept: list[pytest.Item]
    removed: list[pytest.Item]
    meta: dict[str, ItemMeta]


def select(
    items: Sequence[pytest.Item],
    options: RunOptions,
    catalog: Mapping[str, Requirement],
    earlier: Earlier,
    entry_of: Callable[[str, tuple[str, ...]], Entry | None],
) -> Selection:
    """Split *items* by the run's selection; *entry_of* names the manifest entry that
    applies to a test (and is asked about every conformance test, selected or not)."""
    root = suite.conformance_root()
    exact = set(options.tests)
    kept: list[pytest.Item] = []
    removed: list[pytest.Item] = []
    meta: dict[str, ItemMeta] = {}
    for item in items:
        if not suite.is_conformance_item(item):
            kept.append(item)
            continue
        reqs = tuple(suite.requirement_ids(item))
        caps = suite.capabilities_of(item)
        test_id = suite.stable_test_id(item, root)
        entry = entry_of(test_id, reqs)
        selected = wanted(reqs, caps, options, catalog)
        if exact and test_id not in exact:
            selected = False
        if selected and earlier.done(test_id):
            selected = False
        if selected:
            kept.append(item)
            is_property = bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", 0))
            meta[item.nodeid] = ItemMeta(test_id, reqs, caps, entry, is_property)
        else:
            removed.append(item)
    return Selection(kept, removed, meta)
