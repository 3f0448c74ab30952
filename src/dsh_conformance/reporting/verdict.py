"""The two conformance verdicts of a run (D-161): from its requirement rows, blocked by
its run problems, never changed by a manifest (D-210)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Final

from attrs import frozen

from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.problems import PROBLEM_WORDS, fault_counts, run_problems
from dsh_conformance.reporting.rows import (
    FAILED_STATUSES,
    INCONCLUSIVE,
    MAY_ONLY,
    NOT_APPLICABLE,
    PARTLY,
    PASS,
    REVIEW,
    UNREADABLE,
    UNRELIABLE,
    UNSUPPORTED,
    UNTESTED,
    XFAIL,
    RequirementRow,
    is_partly,
    requirement_rows,
)


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
