"""The expectation manifest applied to a run: it serves the gate, never conformance.

An entry names a test id or a requirement id and says ``unsupported`` or ``xfail``.
An ``xfail`` test that fails blaming only what its entries name (D-421) is recorded
``xfail`` with its raw outcome in ``detail`` (conformance still counts it, D-210); a
test-id entry whose fixed test (or strict property) passes is an ``xpass``, which fails
the gate, and a property that met no failure is "expected failure not reproduced"
(D-422).  The manifest changes no example a test runs (D-183, revised).  At the end, an
entry that matches no test of a full collection is ``stale``, and a requirement entry
none of whose tests failed is an ``unexpected-pass``.  The host's reviews in the
manifest answer the reviews a test asked for (D-199).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import pytest
from attrs import frozen

from dsh_conformance.errors import HarnessError
from dsh_conformance.outcomes import APPLICABLE, BROKE, FAILING, Outcome

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


@frozen
class Settled:
    """A test's outcome once its entry applied, and what the record says of it."""

    outcome: Outcome
    #: The raw outcome behind an ``xfail``, else empty.
    detail: str = ""
    #: A line the record's message starts with (why the result is what it is), or empty.
    note: str = ""
    #: The property found no failure the non-strict entry expects (D-422).
    not_reproduced: bool = False
    #: What the entry lets a failure blame (D-421); empty when any.
    expected_blame: tuple[str, ...] = ()


def settle(
    entry: Entry | None,
    outcome: Outcome,
    blame: Sequence[str],
    *,
    allowed: Sequence[str] = (),
    property_test: bool = False,
) -> Settled:
    """*outcome* (and its *blame*) under *entry*, the entry that applies to the test;
    *allowed* is what the manifest lets its failure blame (``Manifest.expected_blame``:
    every matching entry's ids, empty for any).  A failure blaming anything else stays
    a failure (D-421); a property whose examples met no failure under a non-strict entry
    passed, "expected failure not reproduced" (D-422); a fixed test's pass is an xpass."""
    from dsh_conformance.adapters.expectations import unexpected_blame

    if entry is None or entry.status != "xfail":
        return Settled(outcome)
    allowed = tuple(allowed)
    if outcome in FAILING:
        stray = () if outcome in BROKE else unexpected_blame(allowed, blame)
        if stray:
            note = (
                f"unexpected failure: {entry.id} expects only {', '.join(allowed)} to "
                f"fail here, not {', '.join(stray)}"
            )
            return Settled(outcome, note=note, expected_blame=allowed)
        return Settled(Outcome.XFAIL, detail=str(outcome), expected_blame=allowed)
    if outcome is Outcome.PASS and not entry.is_requirement:
        if property_test and not entry.strict:
            note = (
                f"expected failure not reproduced: {entry.id} expects a failure, and no "
                "example of this run found one"
            )
            return Settled(outcome, note=note, not_reproduced=True, expected_blame=allowed)
        return Settled(Outcome.XPASS, note=f"unexpected pass: the manifest says {entry.id} fails")
    return Settled(outcome)


def apply(
    entry: Entry | None,
    outcome: Outcome,
    report: pytest.TestReport,
    state: Evidence,
    *,
    allowed: Sequence[str] = (),
    property_test: bool = False,
) -> Outcome:
    """*outcome* as the manifest sees it (``settle``): an expected failure becomes
    ``xfail`` (pytest shows it skipped), an unexpected pass ``xpass`` (pytest shows it
    failed); the evidence keeps why.  The test ran exactly as without a manifest: no
    phase, example or budget depends on it (D-183, revised by issue 41)."""
    settled = settle(entry, outcome, state.blame, allowed=allowed, property_test=property_test)
    if entry is None or settled == Settled(outcome):
        return outcome
    state.detail, state.not_reproduced = settled.detail, settled.not_reproduced
    state.expected_blame = settled.expected_blame
    if settled.outcome is Outcome.XFAIL:
        report.outcome = "skipped"
        report.wasxfail = f"{entry.id}: {entry.reason}"
    elif settled.outcome is Outcome.XPASS:
        report.outcome = "failed"
        report.longrepr = f"[XPASS(strict)] expected to fail ({entry.id}: {entry.reason})"
        state.message = settled.note
    elif settled.note:
        state.note(settled.note)
    return settled.outcome


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
