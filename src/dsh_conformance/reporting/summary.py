"""Per-requirement aggregation of a run: the rows every report shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, FAILING, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.spec import Requirement

#: Requirement statuses, worst first.
FAIL: Final = "fail"
XFAIL: Final = "xfail"
PASS: Final = "pass"
UNSUPPORTED: Final = "unsupported"
NOT_APPLICABLE: Final = "not applicable"
UNTESTED: Final = "untested"
STATUS_ORDER: Final = (FAIL, XFAIL, PASS, UNSUPPORTED, NOT_APPLICABLE, UNTESTED)


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

    @property
    def failing(self) -> tuple[TestResult, ...]:
        return tuple(t for t in self.tests if t.outcome in FAILING)


def requirement_status(tests: Sequence[TestResult], level: str = "MUST") -> str:
    outcomes = {t.outcome for t in tests}
    if not tests:
        return NOT_APPLICABLE if level == "informative" else UNTESTED
    if outcomes & FAILING:
        return FAIL
    if Outcome.XFAIL in outcomes:
        return XFAIL
    if Outcome.PASS in outcomes:
        return PASS
    if outcomes == {Outcome.UNSUPPORTED}:
        return UNSUPPORTED
    return NOT_APPLICABLE


def requirement_rows(
    record: RunRecord, catalog: Mapping[str, Requirement] | None = None
) -> list[RequirementRow]:
    """One row per requirement: the profile's whole catalog for an unfiltered run, only
    the requirements the run's tests cite for a filtered one."""
    if catalog is None:
        from dsh_conformance.spec import load_catalog

        catalog = load_catalog().requirements
    by_req: dict[str, list[TestResult]] = {}
    for test in record.tests:
        for cited in test.requirements:
            by_req.setdefault(cited, []).append(test)
    profile = str(record.header.get("spec_profile", "seed"))
    filters = record.header.get("filters", {}) or {}
    filtered = any(filters.get(k) for k in ("requirements", "capabilities", "keyword"))
    ids = set(by_req)
    if not filtered:
        ids |= {r.id for r in catalog.values() if profile in r.profiles}
    rows = []
    for rid in sorted(ids, key=_sort_key):
        req = catalog.get(rid)
        tests = tuple(by_req.get(rid, ()))
        level = req.level if req else "?"
        rows.append(
            RequirementRow(
                id=rid,
                level=level,
                title=req.title if req else "(not in this catalog)",
                quote=req.quote if req else "",
                status=requirement_status(tests, level),
                counts=Counter(t.outcome for t in tests),
                tests=tests,
            )
        )
    return rows


def _sort_key(rid: str) -> tuple[str, str]:
    area, _, number = rid.partition("-")
    return (area, number)


def compliance(record: RunRecord) -> float | None:
    """Passing share of applicable tests (unsupported and skipped do not count)."""
    applicable = [t for t in record.tests if t.outcome in APPLICABLE]
    if not applicable:
        return None
    return sum(t.outcome is Outcome.PASS for t in applicable) / len(applicable)


def run_failed(record: RunRecord) -> bool:
    """Whether the run fails CI: a failing outcome, an expectation problem or truncation."""
    return (
        record.truncated
        or bool(record.expectation_problems)
        or any(t.outcome in FAILING for t in record.tests)
    )


def replay_command(record: RunRecord) -> str:
    """The command line that reruns *record* with the same examples (same seed)."""
    import shlex

    header = record.header
    hypothesis = header.get("hypothesis") or {}
    filters = header.get("filters") or {}
    argv = ["dsh-conformance", "run", "--adapter", str((header.get("adapter") or {}).get("name"))]
    if hypothesis.get("seed") is not None:
        argv += ["--seed", str(hypothesis["seed"])]
    if hypothesis.get("profile") in {"quick", "dev", "ci", "thorough"}:
        argv += ["--hypothesis-profile", str(hypothesis["profile"])]
    argv += ["--spec-profile", str(header.get("spec_profile", "seed"))]
    for requirement in filters.get("requirements") or ():
        argv += ["--requirement", str(requirement)]
    for capability in filters.get("capabilities") or ():
        argv += ["--capability", str(capability)]
    if filters.get("keyword"):
        argv += ["-k", str(filters["keyword"])]
    if header.get("expectations"):
        argv += ["--expectations", str(header["expectations"])]
    return shlex.join(argv)
