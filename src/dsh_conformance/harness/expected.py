"""The expectation manifest applied to a run: it serves the gate, never conformance.

An entry names a test id or a requirement id and says ``unsupported`` or ``xfail``
(D-183).  An ``xfail`` test that fails is recorded ``xfail`` with its raw outcome in
``detail`` (conformance still counts it, D-210); a test-id entry whose test passes is
an ``xpass``, which fails the gate.  At the end, an entry that matches no test of a
full collection is ``stale``, and a requirement entry none of whose tests failed is an
``unexpected-pass``.  The host's reviews in the manifest answer the reviews a test
asked for (D-199).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

import pytest

from dsh_conformance.errors import HarnessError
from dsh_conformance.outcomes import APPLICABLE, FAILING, Outcome

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Entry, Manifest
    from dsh_conformance.harness.evidence import Evidence
    from dsh_conformance.options import RunOptions
    from dsh_conformance.record import TestResult

#: Every kind of footer ``expectation_problems`` item the harness writes: the record
#: schema allows exactly these (tests/test_record_schema.py, D-215).
PROBLEM_KINDS: Final = ("stale", "unexpected-pass", "blame-not-cited")


def load(
    options: RunOptions,
    requirements: Mapping[str, Any],
    versions: Callable[[], tuple[str, dict[str, str]]],
) -> Manifest | None:
    """The run's manifest (None without one); conditional entries are resolved for the
    implementation's *versions* (the handshake's, D-188), asked for only when needed."""
    if not options.expectations:
        return None
    from dsh_conformance.adapters.expectations import load_manifest

    try:
        manifest = load_manifest(options.expectations, known_requirements=requirements)
    except HarnessError as exc:
        raise pytest.UsageError(str(exc)) from exc
    if manifest.versioned:  # conditional entries need the handshake's versions now
        manifest = manifest.for_version(*versions())
    return manifest


class Tally:
    """How many collected tests each entry matches, selected or not (stale entries)."""

    def __init__(self, manifest: Manifest | None) -> None:
        self.manifest = manifest
        self.matched: dict[str, int] = (
            {e.id: 0 for e in manifest.entries} if manifest is not None else {}
        )

    def entry_of(self, test_id: str, requirements: tuple[str, ...]) -> Entry | None:
        """The entry that applies to the test, counting every entry it matches."""
        if self.manifest is None:
            return None
        for e in self.manifest.entries:
            if e.matches(test_id, requirements):
                self.matched[e.id] += 1
        return self.manifest.match(test_id, requirements)


def unsupported(entry: Entry | None) -> str | None:
    """The skip reason of a test its entry declares unsupported, else None."""
    if entry is not None and entry.status == "unsupported":
        return f"unsupported: {entry.reason} (expectation {entry.id})"
    return None


def without_shrinking(item: pytest.Item, entry: Entry | None) -> Callable[[], None] | None:
    """A failure the manifest expects needs a failing example, not the smallest one
    (D-183): Hypothesis skips shrinking it (most of a known divergence's time: minutes
    on the published release).  Returns what puts the settings back, or None."""
    if entry is None or entry.status != "xfail":
        return None
    test: Any = getattr(item, "obj", None)
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if current is None or not getattr(test, "is_hypothesis_test", False):
        return None
    from hypothesis import Phase, settings

    phases = tuple(p for p in current.phases if p not in (Phase.shrink, Phase.explain))
    test._hypothesis_internal_use_settings = settings(current, phases=phases)

    def restore() -> None:
        test._hypothesis_internal_use_settings = current

    return restore


def apply(
    entry: Entry | None, outcome: Outcome, report: pytest.TestReport, state: Evidence
) -> Outcome:
    """*outcome* as the manifest sees it: an expected failure becomes ``xfail`` (pytest
    shows it skipped), a test-id entry's pass an ``xpass`` (pytest shows it failed)."""
    if entry is None or entry.status != "xfail":
        return outcome
    if outcome in FAILING:
        state.detail = str(outcome)
        report.outcome = "skipped"
        report.wasxfail = f"{entry.id}: {entry.reason}"
        return Outcome.XFAIL
    if outcome is Outcome.PASS and not entry.is_requirement:
        report.outcome = "failed"
        report.longrepr = f"[XPASS(strict)] expected to fail ({entry.id}: {entry.reason})"
        state.message = f"unexpected pass: the manifest says {entry.id} fails"
        return Outcome.XPASS
    return outcome


def problems(
    manifest: Manifest | None,
    results: Iterable[TestResult],
    matched: Mapping[str, int] | None = None,
) -> list[dict[str, str]]:
    """The entries the run contradicts, in manifest order: ``stale`` where *matched*
    (the tally of a full collection) says an entry matches no test, ``unexpected-pass``
    where a requirement entry's tests all passed.  Over *all* results: an xdist worker
    sees only its share, so the controller decides this for the whole run."""
    found: list[dict[str, str]] = []
    if manifest is None:
        return found
    results = list(results)
    for entry in manifest.entries:
        if matched is not None and matched.get(entry.id, 0) == 0:
            found.append(
                {
                    "id": entry.id,
                    "kind": "stale",
                    "message": f"{entry.id} matches no test of the suite: remove the "
                    "entry or fix its id",
                }
            )
            continue
        if not (entry.is_requirement and entry.status == "xfail"):
            continue
        ran = [
            r
            for r in results
            if r.outcome in APPLICABLE and entry.matches(r.nodeid, r.requirements)
        ]
        if ran and not any(r.outcome in FAILING | {Outcome.XFAIL} for r in ran):
            found.append(
                {
                    "id": entry.id,
                    "kind": "unexpected-pass",
                    "message": f"{entry.id} is expected to fail but all {len(ran)} of its "
                    "tests passed: remove the entry",
                }
            )
    return found


def reviews(
    manifest: Manifest | None, asked: Iterable[dict[str, Any]]
) -> tuple[dict[str, Any], ...]:
    """The reviews a test asked for (checks.review, D-199), each with the host's
    review from the manifest when one names the same requirement and text sha256."""
    out = []
    for item in asked:
        if manifest is None:
            out.append(item)
            continue
        found = manifest.review_of(item["requirement"], item["sha256"])
        if found is not None:
            out.append({**item, "review": found.to_json()})
            continue
        # A review of the same requirement for another text: the text changed since.
        stale = [r.sha256 for r in manifest.reviews if r.requirement == item["requirement"]]
        out.append({**item, "stale": stale} if stale else item)
    return tuple(out)
