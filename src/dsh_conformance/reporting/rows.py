"""Per-requirement rows of a run: each requirement's status from the tests that judge it.

The bottom of the verdict model (D-214): the verdicts, the gate and every renderer read
these rows; nothing here reads a manifest (D-210).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.reviews import review_items
from dsh_conformance.spec import Requirement

#: Requirement statuses, worst first.
FAIL: Final = "fail"
XFAIL: Final = "xfail"
PASS: Final = "pass"
UNSUPPORTED: Final = "unsupported"
NOT_APPLICABLE: Final = "not applicable"
UNTESTED: Final = "untested"
#: Every test citing it failed on another requirement first: neither passed nor failed.
INCONCLUSIVE: Final = "inconclusive"
#: Passing, but a natural-language check awaits a person's review (D-199): never a failure.
REVIEW: Final = "review"
#: A MAY sentence of a note nothing here judged: it cannot fail the seed verdict anyway.
MAY_ONLY: Final = "MAY: cannot fail the seed verdict"
#: Every test judging it ended in a crash, timeout or unreadable result (D-212).
UNRELIABLE: Final = "not judged: adapter unreliable"
#: Every test citing it could not read a field its checks need (D-522).
UNREADABLE: Final = "not judged: unreadable field"
#: Passing where it was read, unreadable elsewhere: ``pass on N of M paths (K unreadable)``
#: (D-522), never a plain pass; a verdict counts it as partly judged.
PARTLY: Final = "partly judged"
#: Statuses that fail a verdict at a gating level: an expected failure is a failure (D-210).
FAILED_STATUSES: Final = frozenset({FAIL, XFAIL})
STATUS_ORDER: Final = (
    FAIL,
    XFAIL,
    REVIEW,
    PASS,
    PARTLY,
    UNREADABLE,
    UNRELIABLE,
    INCONCLUSIVE,
    UNSUPPORTED,
    NOT_APPLICABLE,
    UNTESTED,
    MAY_ONLY,
)


@frozen
class RequirementRow:
    """One requirement's result in one run."""

    id: str
    level: str
    title: str
    quote: str
    status: str
    counts: Mapping[Outcome, int]
    tests: tuple[TestResult, ...]
    #: ``seed`` (a sentence of a note is the source) or ``profile`` (a decision).
    verdict: str = "seed"

    @property
    def failing(self) -> tuple[TestResult, ...]:
        """Tests that failed it, expected by a manifest or not (D-210); not a failed test
        that passed this requirement's checks (D-330)."""
        return tuple(t for t in self.tests if t.misbehaved and not t.passes(self.id))

    @property
    def passing(self) -> tuple[TestResult, ...]:
        """Tests that passed it: passed (or passed unexpectedly), or failed on another
        requirement after its checks of this one passed (D-330)."""
        return tuple(
            t
            for t in self.tests
            if t.outcome_for(self.id) in (Outcome.PASS, Outcome.XPASS) and not t.broke
        )

    @property
    def tally(self) -> str:
        """``passing/judging``: the one count of a requirement's tests every report shows
        (D-462).  A test judges it when it passed or failed it; an unsupported or skipped
        test and one the adapter broke did not (they are counted apart, ``not_judging``)."""
        judging = len(self.passing) + len(self.failing)
        return f"{len(self.passing)}/{judging}" if judging else "–"

    @property
    def not_judging(self) -> int:
        """Tests citing it that judged nothing: unsupported, skipped, the adapter broke."""
        return len(self.tests) - len(self.passing) - len(self.failing)


def requirement_status(
    tests: Sequence[TestResult], level: str = "MUST", requirement: str | None = None
) -> str:
    """What the tests judging a requirement say of it: from what the implementation did,
    never from a manifest (D-210).  ``xfail`` is a failure the manifest expected (it fails
    the verdict as ``fail`` does); a test the adapter broke judges nothing (D-212); a
    failed test that passed *requirement*'s checks passes it (D-330)."""
    if not tests:
        return NOT_APPLICABLE if level == "informative" else UNTESTED
    field = (lambda t: t.unreadable_for(requirement)) if requirement else (lambda t: False)
    judging = [t for t in tests if not t.broke and not field(t)]
    unread = [t for t in tests if field(t) or (t.broke and _unreadable_result(t))]
    if not judging:
        return UNREADABLE if any(field(t) for t in tests) else UNRELIABLE
    passes = (lambda t: t.passes(requirement)) if requirement is not None else (lambda t: False)
    failed = [t for t in judging if t.misbehaved and not passes(t)]
    if failed:
        return XFAIL if all(t.outcome is Outcome.XFAIL for t in failed) else FAIL
    outcomes = {Outcome.PASS if passes(t) else t.outcome for t in judging}
    if outcomes & {Outcome.PASS, Outcome.XPASS}:
        if unread:  # D-522: a pass on the paths that were read, never a plain pass
            read = sum(
                1 for t in judging if passes(t) or t.outcome in (Outcome.PASS, Outcome.XPASS)
            )
            return partly(read, read + len(unread), len(unread))
        return PASS
    if any(field(t) for t in tests):  # no path read it: unreadable, not unsupported
        return UNREADABLE
    if outcomes == {Outcome.UNSUPPORTED}:
        return UNSUPPORTED
    return NOT_APPLICABLE


def _unreadable_result(test: TestResult) -> bool:
    """A test whose whole result could not be read (a protocol problem, D-251)."""
    raw = Outcome(test.detail) if test.outcome is Outcome.XFAIL and test.detail else test.outcome
    return raw is Outcome.PROTOCOL


def partly(read: int, paths: int, unreadable: int) -> str:
    """The status of a requirement passing on *read* of *paths* tests (D-522)."""
    return f"pass on {read} of {paths} paths ({unreadable} unreadable)"


def is_partly(status: str) -> bool:
    return status == PARTLY or (status.startswith("pass on ") and status.endswith("unreadable)"))


def requirement_rows(
    record: RunRecord, catalog: Mapping[str, Requirement] | None = None
) -> list[RequirementRow]:
    """One row per requirement: the profile's whole catalog for an unfiltered run, only
    the requirements the run's tests cite for a filtered one."""
    if catalog is None:
        from dsh_conformance.spec import load_catalog

        catalog = load_catalog().requirements
    by_req: dict[str, list[TestResult]] = {}
    unjudged: set[str] = set()
    for test in record.tests:
        for cited in test.requirements:
            # a broken test, or one that could not read a field, is shown and judges nothing
            if test.judges(cited) or test.broke or test.unreadable_for(cited):
                by_req.setdefault(cited, []).append(test)
            else:
                unjudged.add(cited)
    awaiting = {item.requirement for item in review_items(record) if item.review is None}
    profile = str(record.header.get("spec_profile", "seed"))
    filters = record.header.get("filters", {}) or {}
    filtered = any(filters.get(k) for k in ("requirements", "capabilities", "keyword"))
    ids = set(by_req) | unjudged
    if not filtered:
        ids |= {r.id for r in catalog.values() if profile in r.profiles}
    rows = []
    for rid in sorted(ids, key=sort_key):
        req = catalog.get(rid)
        tests = tuple(by_req.get(rid, ()))
        level = req.level if req else "?"
        status = requirement_status(tests, level, rid)
        if not tests and rid in unjudged:
            status = INCONCLUSIVE
        status = _review_or_may(status, req, rid in awaiting)
        rows.append(
            RequirementRow(
                id=rid,
                level=level,
                title=req.title if req else "(not in this catalog)",
                quote=req.quote if req else "",
                status=status,
                counts=Counter(t.outcome_for(rid) for t in tests),
                tests=tests,
                verdict=req.verdict if req else "profile",
            )
        )
    return rows


def _review_or_may(status: str, req: Requirement | None, awaiting: bool) -> str:
    """A pass whose natural-language checks await a review is ``review``; a seed MAY that
    nothing judged is shown as what it is, not as unchecked (issue 25)."""
    if status == PASS and awaiting:
        return REVIEW
    if (
        req is not None
        and req.level == "MAY"
        and req.verdict == "seed"
        and status in {UNTESTED, INCONCLUSIVE, NOT_APPLICABLE}
    ):
        return MAY_ONLY
    return status


def sort_key(rid: str) -> tuple[str, str]:
    area, _, number = rid.partition("-")
    return (area, number)


def compliance(record: RunRecord) -> float | None:
    """Passing share of applicable tests (unsupported and skipped do not count)."""
    applicable = [t for t in record.tests if t.outcome in APPLICABLE]
    if not applicable:
        return None
    return sum(t.outcome is Outcome.PASS for t in applicable) / len(applicable)
