"""Per-requirement aggregation of a run: the rows every report shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from attrs import frozen

from dsh_conformance.errors import (
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_NOTHING,
)
from dsh_conformance.outcomes import APPLICABLE, BROKE, FAILING, Outcome
from dsh_conformance.outcomes import GATES as GATES  # re-exported: --fail-on names
from dsh_conformance.record import RunRecord, TestResult
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


@frozen
class ReviewItem:
    """One text a person must judge against a note's sentence (checks.review, D-199)."""

    requirement: str
    sha256: str
    text: str
    sentence: str
    hints: tuple[str, ...]
    #: The host's review from its manifest (``{by, why}``), or None: a missing review.
    review: Mapping[str, str] | None
    tests: tuple[str, ...]
    #: sha256s the manifest reviewed under the same requirement while this text has none:
    #: the text changed since its review (the review no longer applies).
    stale: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "requirement": self.requirement,
            "sha256": self.sha256,
            "text": self.text,
            "sentence": self.sentence,
            "hints": list(self.hints),
            "review": dict(self.review) if self.review is not None else None,
            "tests": list(self.tests),
            "stale": list(self.stale),
        }


def stale_note(item: ReviewItem) -> str:
    """Why a text with a review of its requirement in the manifest still has none."""
    return (
        "changed since its review: the manifest reviewed another text "
        f"(sha256 {', '.join(item.stale)}); read this one and record it"
    )


def review_state(item: ReviewItem) -> str:
    """One line on whether a host's review covers *item* (D-199), for every report."""
    if item.review is not None:
        return f"reviewed by {item.review.get('by')}: {item.review.get('why')}"
    state = f"missing (sha256 {item.sha256})"
    return f"{state}; {stale_note(item)}" if item.stale else state


def review_items(record: RunRecord) -> list[ReviewItem]:
    """Every distinct (requirement, text) a test asked a person to review, in run order."""
    found: dict[tuple[str, str], ReviewItem] = {}
    for test in record.tests:
        for item in test.reviews:
            key = (str(item.get("requirement")), str(item.get("sha256")))
            known = found.get(key)
            if known is not None:
                found[key] = ReviewItem(
                    known.requirement,
                    known.sha256,
                    known.text,
                    known.sentence,
                    known.hints,
                    known.review,
                    (*known.tests, test.nodeid),
                    known.stale,
                )
                continue
            found[key] = ReviewItem(
                requirement=key[0],
                sha256=key[1],
                text=str(item.get("text", "")),
                sentence=str(item.get("sentence", "")),
                hints=tuple(str(h) for h in item.get("hints", ())),
                review=item.get("review"),
                tests=(test.nodeid,),
                stale=tuple(str(sha) for sha in item.get("stale", ())),
            )
    return list(found.values())


@frozen
class RunProblem:
    """Why a run cannot pass whatever its tests say (D-175): it did not finish, nothing
    applicable ran, or a capability the run requires is not declared.

    Every report shows these at the top, and each blocks both verdicts.
    """

    code: str
    message: str
    hint: str = ""
    exit_status: int = EX_FAILURES
    #: Whether it blocks both verdicts (a suite problem fails the run, not the verdicts).
    blocks: bool = True

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


#: Short words for a verdict label and a badge, by problem code.
PROBLEM_WORDS: Final = {
    "truncated": "truncated run",
    "interrupted": "interrupted run",
    "aborted": "aborted run",
    "stopped": "stopped run",
    "no-applicable-test": "nothing tested",
    "missing-capability": "capability missing",
    "adapter-unreliable": "adapter unreliable",
    "suite-problem": "suite problem",
}


def fault_counts(tests: Sequence[TestResult]) -> str:
    """``38 crashes, 2 timeouts, 1 unreadable result`` for the tests the adapter broke."""
    counts = Counter(
        Outcome(t.detail) if t.outcome is Outcome.XFAIL and t.detail else t.outcome
        for t in tests
        if t.broke
    )
    words = (
        (Outcome.CRASH, "crash", "crashes"),
        (Outcome.TIMEOUT, "timeout", "timeouts"),
        (Outcome.PROTOCOL, "unreadable result", "unreadable results"),
    )
    return ", ".join(
        f"{counts[o]} {one if counts[o] == 1 else many}" for o, one, many in words if counts[o]
    )


def run_problems(record: RunRecord, *, incomplete_ok: bool = False) -> tuple[RunProblem, ...]:
    """What keeps *record* from passing, worst first (empty for a sound run).

    *incomplete_ok* (``--allow-incomplete``): judge an unfinished run by what ran.
    """
    problems: list[RunProblem] = []
    ran = f"{len(record.tests)} of {record.header.get('selected', '?')} tests recorded"
    resume = "continue it with `dsh-conformance run --resume RECORD`, or rerun"
    if incomplete_ok:
        pass
    elif record.footer is None:
        problems.append(
            RunProblem(
                "truncated",
                f"the run did not finish: the record has no footer ({ran}); the harness "
                "was killed or crashed",
                resume,
                EX_INCOMPLETE,
            )
        )
    elif record.ending == "interrupted":
        problems.append(
            RunProblem(
                "interrupted", f"the run was {record.ending_text} ({ran})", resume, EX_INTERRUPTED
            )
        )
    elif record.ending == "aborted":
        problems.append(
            RunProblem(
                "aborted",
                f"the run was aborted: {record.footer.get('reason', '?')} ({ran})",
                resume,
                EX_INCOMPLETE,
            )
        )
    elif record.ending == "stopped":
        problems.append(
            RunProblem(
                "stopped",
                f"the run stopped early ({record.footer.get('reason', '-x')}; {ran})",
                "rerun without -x to judge every test",
            )
        )
    gate = record.header.get("gate") or {}
    adapter = record.header.get("adapter") or {}
    declared = {str(c) for c in adapter.get("capabilities") or ()}
    missing = [str(c) for c in gate.get("require") or () if str(c) not in declared]
    if missing and "error" not in adapter:
        problems.append(
            RunProblem(
                "missing-capability",
                f"the run requires {', '.join(missing)}, which the implementation does not "
                f"declare (it declares {', '.join(sorted(declared)) or 'nothing'})",
                "declare the capability in the handshake, or drop --require",
            )
        )
    applicable = any(t.outcome in APPLICABLE for t in record.tests)
    if not applicable and not gate.get("allow_empty") and "error" not in adapter:
        skipped = Counter(str(t.outcome) for t in record.tests)
        what = ", ".join(f"{n} {o}" for o, n in sorted(skipped.items())) or "no test"
        problems.append(
            RunProblem(
                "no-applicable-test",
                f"no applicable test ran ({what}): the implementation declares "
                f"{', '.join(sorted(declared)) or 'no capability'}, so nothing was checked",
                "declare the capabilities the implementation offers in its handshake, "
                "select tests it supports (-c/-r/-k), or pass --allow-empty",
                EX_NOTHING,
            )
        )
    broken = [t for t in record.tests if t.outcome in BROKE]
    if broken:
        cited = sorted({r for t in broken for r in t.requirements}, key=sort_key)
        problems.append(
            RunProblem(
                "adapter-unreliable",
                f"the adapter broke in {len(broken)} tests ({fault_counts(broken)}): they "
                f"blame no requirement, and {len(cited)} requirements they cite were not "
                f"judged by them ({', '.join(cited[:12])}{' …' if len(cited) > 12 else ''})",
                "run `dsh-conformance smoke` on the adapter; each test's request in flight "
                "is in the report",
            )
        )
    suite = [f"{p.get('code')}: {p.get('message')}" for p in record.suite_problems] + [
        str(p.get("message"))
        for p in record.expectation_problems
        if p.get("kind") not in ("stale", "unexpected-pass")
    ]
    if suite:
        problems.append(
            RunProblem(
                "suite-problem",
                f"the suite is inconsistent ({len(suite)}): " + "; ".join(suite[:5]),
                "report it to the suite's maintainers with the record; the verdicts still "
                "stand on what ran",
                blocks=False,
            )
        )
    problems += _suite_reading_errors(record)
    return tuple(problems)


def _suite_reading_errors(record: RunRecord) -> list[RunProblem]:
    """The suite's own reading errors (D-521): shown, blocking nothing, failing no run."""
    from dsh_conformance.unjudged import suite_problems

    found = suite_problems(record.tests)
    if not found:
        return []
    return [
        RunProblem(
            "suite-problem",
            f"checks of the suite read fields the protocol does not promise ({len(found)}): "
            + "; ".join(found[:5]),
            "report it to the suite's maintainers with the record: those checks judged "
            "nothing, the adapter is not blamed",
            exit_status=0,
            blocks=False,
        )
    ]


@frozen
class Verdict:
    """One of the two conformance verdicts of a run (D-161), from what the implementation
    did: a manifest never changes it (D-210).

    ``seed``: requirements whose source is a sentence of a note, at that sentence's
    level.  ``profile``: the project's decisions and identity with the reference model
    (the reference profile, or the release profile under ``--spec-profile release``).
    """

    name: str
    title: str
    #: Ids at a level that fails the verdict (MUST; SHOULD too for profile) with a failing
    #: test, expected by a manifest or not.
    failing: tuple[str, ...]
    #: Failing ids below that level (a SHOULD or MAY of a note): reported, gated on request.
    warnings: tuple[str, ...]
    counts: Mapping[str, int]
    total: int
    #: Codes of the run problems that block this verdict whatever the tests say (D-175).
    blocked: tuple[str, ...] = ()
    #: What the gating level is called in a headline: ``MUSTs``, ``MUST/SHOULDs``.
    noun: str = "MUSTs"
    #: Requirements at the gating level, and how many of them passed.
    gating: int = 0
    passing: int = 0
    #: Gating-level requirements not judged: capabilities not declared; tests the adapter
    #: broke (D-212); no test judged them (untested, inconclusive, not applicable).
    unsupported: int = 0
    unreliable: tuple[str, ...] = ()
    unjudged: int = 0
    #: Gating-level requirements passing where read and unreadable elsewhere (D-522), and
    #: those no test could read (every check of them met an unreadable field).
    partly: tuple[str, ...] = ()
    unreadable: int = 0
    #: The failing ids whose every failure the manifest expected (shown, never excused).
    expected: tuple[str, ...] = ()
    #: ``38 crashes, 2 timeouts`` when the adapter broke in the run, else empty.
    faults: str = ""

    @property
    def passed(self) -> bool:
        return not self.failing and not self.blocked

    @property
    def judged(self) -> int:
        return self.passing + len(self.failing) + len(self.partly)

    @property
    def not_judged(self) -> list[str]:
        """Why gating-level requirements went unjudged, one phrase per reason."""
        parts = []
        if self.unsupported:
            parts.append(f"{self.unsupported} not judged (capabilities not declared)")
        if self.unreliable:
            parts.append(f"{len(self.unreliable)} not judged (adapter unreliable: {self.faults})")
        if self.unreadable:
            parts.append(f"{self.unreadable} not judged (unreadable fields)")
        if self.unjudged:
            parts.append(f"{self.unjudged} not judged (no test judged them)")
        return parts

    @property
    def partly_text(self) -> str:
        """`` (2 partly judged: unreadable on some paths)`` when some were (D-522)."""
        if not self.partly:
            return ""
        return f" ({len(self.partly)} partly judged: unreadable on some paths)"

    @property
    def label(self) -> str:
        """The verdict in a few words (a table cell, a badge, a JUnit property)."""
        why = [PROBLEM_WORDS.get(code, code) for code in self.blocked]
        if self.failing:
            why.insert(0, f"{len(self.failing)} failing")
        if why == ["adapter unreliable"]:
            return f"not judged: adapter unreliable ({self.faults})"
        if why:
            return f"FAIL ({', '.join(why)})"
        partial = self.judged < self.gating
        text = f"pass on {self.judged} of {self.gating} {self.noun}" if partial else "pass"
        if partial and not self.judged:
            text = f"not judged (0 of {self.gating} {self.noun})"
        elif self.partly:
            text += f", {len(self.partly)} partly judged"
        if self.warnings:
            text += f", {len(self.warnings)} SHOULD/MAY failing"
        return text

    @property
    def headline(self) -> str:
        """The verdict with how much was judged: what every report's headline says."""
        rest = self.not_judged
        if self.gating == 0 and not self.blocked:
            return f"{self.label} (no {self.noun} in this run's selection)"
        if self.failing:
            expected = f" ({len(self.expected)} expected by the manifest)" if self.expected else ""
            text = (
                f"FAIL — {len(self.failing)} of {self.gating} {self.noun} failing{expected}, "
                + ", ".join(
                    [
                        f"{self.passing} pass",
                        *([f"{len(self.partly)} partly judged"] * bool(self.partly)),
                        *rest,
                    ]
                )
            )
            blockers = [PROBLEM_WORDS.get(c, c) for c in self.blocked]
            if blockers:
                text += f"; run problems: {', '.join(blockers)}"
        elif self.blocked:
            text = f"{self.label} — " + ", ".join(
                [f"{self.passing} of {self.gating} {self.noun} pass", *rest]
            )
        elif self.judged == 0:
            text = f"not judged — none of the {self.gating} {self.noun} judged; " + ", ".join(rest)
        elif rest:
            missing = self.gating - self.judged
            text = (
                f"pass on the {self.judged} {self.name} {self.noun} judged{self.partly_text}; "
                f"{missing} not judged "
                f"({'; '.join(p.split(' not judged ')[1].strip('()') for p in rest)})"
            )
        elif self.partly:
            text = f"pass on the {self.judged} {self.name} {self.noun} judged{self.partly_text}"
        else:
            text = f"pass — all {self.gating} {self.noun} pass"
        if self.warnings:
            text += f"; {len(self.warnings)} SHOULD/MAY failing"
        return text

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "title": self.title,
            "passed": self.passed,
            "label": self.label,
            "headline": self.headline,
            "failing": list(self.failing),
            "expected": list(self.expected),
            "warnings": list(self.warnings),
            "blocked": list(self.blocked),
            "statuses": dict(self.counts),
            "requirements": self.total,
            "judged": {
                "level": self.noun,
                "requirements": self.gating,
                "failing": len(self.failing),
                "passing": self.passing,
                "unsupported": self.unsupported,
                "unreliable": list(self.unreliable),
                "unjudged": self.unjudged,
                "partly": list(self.partly),
                "unreadable": self.unreadable,
            },
        }


_PASSING: Final = frozenset({PASS, REVIEW})
_UNJUDGED: Final = frozenset({UNTESTED, INCONCLUSIVE, NOT_APPLICABLE, MAY_ONLY})


def verdicts(
    record: RunRecord, rows: Sequence[RequirementRow] | None = None, *, problems: bool = True
) -> tuple[Verdict, Verdict]:
    """The seed verdict and the profile verdict of *record* (blocked by its run problems
    unless *problems* is false: then they judge only the requirements).

    An ``xfail`` requirement fails its verdict like a ``fail`` one (D-210)."""
    rows = requirement_rows(record) if rows is None else rows
    profile = str(record.header.get("spec_profile", "seed"))
    profile_title = "release profile" if profile == "release" else "reference profile"
    blocked = tuple(p.code for p in run_problems(record) if p.blocks) if problems else ()
    faults = fault_counts(record.tests)
    built = []
    for name, title in (("seed", "seed conformance"), ("profile", profile_title)):
        mine = [r for r in rows if r.verdict == name]
        levels = {"MUST"} if name == "seed" else {"MUST", "SHOULD"}
        gating = [r for r in mine if r.level in levels]
        failing = tuple(r.id for r in gating if r.status in FAILED_STATUSES)
        warnings = tuple(
            r.id
            for r in mine
            if r.status in FAILED_STATUSES and r.level not in levels and r.level != "?"
        )
        built.append(
            Verdict(
                name=name,
                title=title,
                failing=failing,
                warnings=warnings,
                counts=dict(Counter(PARTLY if is_partly(r.status) else r.status for r in mine)),
                total=len(mine),
                blocked=blocked,
                noun="MUSTs" if name == "seed" else "MUST/SHOULDs",
                gating=len(gating),
                passing=sum(r.status in _PASSING for r in gating),
                unsupported=sum(r.status == UNSUPPORTED for r in gating),
                unreliable=tuple(r.id for r in gating if r.status == UNRELIABLE),
                unjudged=sum(r.status in _UNJUDGED for r in gating),
                partly=tuple(r.id for r in gating if is_partly(r.status)),
                unreadable=sum(r.status == UNREADABLE for r in gating),
                expected=tuple(r.id for r in gating if r.status == XFAIL),
                faults=faults,
            )
        )
    return built[0], built[1]


def sort_key(rid: str) -> tuple[str, str]:
    area, _, number = rid.partition("-")
    return (area, number)


def compliance(record: RunRecord) -> float | None:
    """Passing share of applicable tests (unsupported and skipped do not count)."""
    applicable = [t for t in record.tests if t.outcome in APPLICABLE]
    if not applicable:
        return None
    return sum(t.outcome is Outcome.PASS for t in applicable) / len(applicable)


def run_failed(record: RunRecord, gate: str | None = None, *, incomplete_ok: bool = False) -> bool:
    """Whether the run fails CI: a run problem (unfinished, empty, a required capability
    missing: D-175), an expectation problem, or failures.

    With *gate* (``GATES``) only failures of the selected verdicts count (D-161);
    without, any failing test does.  A crash or timeout always fails: the adapter
    broke, so neither verdict can be trusted.
    """
    return run_exit_status(record, gate, incomplete_ok=incomplete_ok) != 0


def run_exit_status(
    record: RunRecord, gate: str | None = None, *, incomplete_ok: bool = False
) -> int:
    """The exit status of a run judged by *gate*: the first run problem's status (130
    interrupted, 3 aborted or truncated, 5 nothing applicable, 1 otherwise), else 1 when
    the gate fails, else 0 (D-176)."""
    problems = [p for p in run_problems(record, incomplete_ok=incomplete_ok) if p.exit_status]
    if problems:
        return problems[0].exit_status
    return EX_FAILURES if _failed(record, gate) else 0


def gate_failed(record: RunRecord, gate: str = "seed") -> bool:
    """Whether a failure no manifest expects fails *gate* (``reporting.gate``)."""
    from dsh_conformance.reporting import gate as gating

    return gating.gate_failed(record, gate)


def _failed(record: RunRecord, gate: str | None) -> bool:
    """The gate (D-211): an expectation problem or an unexpected result fails it; an
    expected failure never does.  Without *gate*, any unexpected failing test does."""
    if record.expectation_problems:
        return True
    if any(t.outcome in BROKE for t in record.tests):
        return True  # the adapter broke (a run problem too)
    if gate is None:
        return any(t.outcome in FAILING for t in record.tests)
    from dsh_conformance.reporting.gate import gate_of

    judged = gate_of(record, gate, incomplete_ok=True)  # run problems: run_exit_status's
    return bool(judged.unexpected or judged.problems)


def gate_rank(test: TestResult, seed: Verdict, profile: Verdict) -> tuple[int, str]:
    """Where a failing test goes in a report's failure list (D-179): a broken adapter
    first, then failures of the seed verdict's MUSTs, of the profile verdict, of a note's
    SHOULD/MAY, then the rest; and a word for each."""
    blamed = set(test.blame or test.requirements)
    if test.broke:
        return 0, "adapter broke"
    if blamed & set(seed.failing):
        return 1, "seed MUST"
    if blamed & set(profile.failing):
        return 2, "profile"
    if blamed & set(seed.warnings):
        return 3, "seed SHOULD/MAY"
    return 4, "other"


def gate_ordered(record: RunRecord, tests: Sequence[TestResult]) -> list[tuple[str, TestResult]]:
    """*tests* in gate order (``gate_rank``), each with its rank's word."""
    seed, profile = verdicts(record)
    ranked = sorted(
        ((gate_rank(t, seed, profile), i, t) for i, t in enumerate(tests)),
        key=lambda item: (item[0][0], item[1]),
    )
    return [(rank[1], test) for rank, _, test in ranked]


def replay_test_command(record: RunRecord, test: TestResult) -> str:
    """The command that reruns just *test*, this one case or parameter, with the same
    examples (same seed)."""
    import shlex

    return shlex.join([*shlex.split(replay_command(record, filters=False)), "--test", test.nodeid])


def _is_builtin(manifest: str, adapter: str) -> bool:
    """Whether *manifest* is the one a run of *adapter* loads anyway: the replay need not
    name it (an absolute path into site-packages helps nobody)."""
    from dsh_conformance.adapters.expectations import builtin_manifest

    builtin = builtin_manifest(adapter)
    return builtin is not None and Path(manifest).resolve() == builtin.resolve()


def replay_command(record: RunRecord, *, filters: bool = True) -> str:
    """The command line that reruns *record* with the same examples (same seed)."""
    import shlex

    header = record.header
    hypothesis = header.get("hypothesis") or {}
    selection = (header.get("filters") or {}) if filters else {}
    argv = ["dsh-conformance", "run", "--adapter", str((header.get("adapter") or {}).get("name"))]
    if hypothesis.get("seed") is not None:
        argv += ["--seed", str(hypothesis["seed"])]
    if hypothesis.get("profile") in {"quick", "dev", "ci", "thorough"}:
        argv += ["--hypothesis-profile", str(hypothesis["profile"])]
    if hypothesis.get("max_examples_option"):
        argv += ["--max-examples", str(hypothesis["max_examples_option"])]
    argv += ["--spec-profile", str(header.get("spec_profile", "seed"))]
    for requirement in selection.get("requirements") or ():
        argv += ["--requirement", str(requirement)]
    for capability in selection.get("capabilities") or ():
        argv += ["--capability", str(capability)]
    for test in selection.get("tests") or ():
        argv += ["--test", str(test)]
    if selection.get("keyword"):
        argv += ["-k", str(selection["keyword"])]
    if header.get("expectations") and not _is_builtin(str(header["expectations"]), argv[3]):
        argv += ["--expectations", str(header["expectations"])]
    gate = header.get("gate") or {}
    for capability in gate.get("require") or ():
        argv += ["--require", str(capability)]
    if gate.get("allow_empty"):
        argv.append("--allow-empty")
    return shlex.join(argv)
