"""The regression gate (D-211): a run against its manifest's known state.

Beside the conformance verdicts (reporting.verdict), never mixed with them: expected
failures pass the gate and still fail conformance (D-210).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from attrs import frozen

from dsh_conformance.outcomes import BROKE, GATES, MISBEHAVED, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.gateitems import GateItem, item_of_problem, item_of_test
from dsh_conformance.reporting.problems import PROBLEM_WORDS, run_problems

#: How the reports show a property whose expected failure no example met (D-422).
NOT_REPRODUCED: Final = "pass (expected failure not reproduced)"


def expected_as(test: TestResult) -> str:
    """What an expected result was, as every report lists it: the raw outcome behind an
    ``xfail``, ``unsupported``, or a pass that did not reproduce the failure (D-422)."""
    return NOT_REPRODUCED if test.not_reproduced else test.detail or str(test.outcome)


def _selection(gate: str) -> tuple[set[str], set[str]]:
    """The (seed levels, profile levels) a ``--fail-on`` gate counts failures at."""
    if gate not in GATES:
        raise ValueError(f"unknown gate {gate!r}: one of {', '.join(GATES)}")
    seed = {"MUST"} | ({"SHOULD", "MAY"} if gate in ("seed-should", "all") else set())
    profile = {"MUST", "SHOULD"} if gate in ("profile", "all") else set()
    return seed, profile


def gated_ids(gate: str) -> set[str]:
    from dsh_conformance.spec import load_catalog

    seed, profile = _selection(gate)
    return {
        r.id
        for r in load_catalog().requirements.values()
        if r.level in (seed if r.verdict == "seed" else profile)
    }


@frozen
class Gate:
    """The regression gate (D-211): the run against its manifest's known state.

    Unexpected results fail it: a failure no manifest entry expects (at the levels
    ``--fail-on`` selects), a pass the manifest said would fail, a crash, timeout or
    unreadable result, a manifest problem.  Expected failures are listed with their
    manifest reasons; they never change a conformance verdict.  Without a manifest the
    gate is the conformance verdicts ``--fail-on`` selects.
    """

    fail_on: str
    manifest: str | None
    unexpected: tuple[TestResult, ...]
    expected: tuple[TestResult, ...]
    problems: tuple[Mapping[str, object], ...]
    #: Run problems (aborted, interrupted, nothing tested, …): the gate fails on them
    #: whatever the tests say, as the exit status does (D-175): a green cannot lie.
    blocked: tuple[str, ...] = ()
    #: Property tests whose expected failure no example of this run met (D-422): they
    #: passed; listed, never failing the gate.
    not_reproduced: tuple[TestResult, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.unexpected and not self.problems and not self.blocked

    @property
    def count(self) -> int:
        return len(self.unexpected) + len(self.problems)

    @property
    def items(self) -> tuple[GateItem, ...]:
        """What fails the gate, one item each, as every report lists it first (D-461)."""
        return tuple(item_of_test(t) for t in self.unexpected) + tuple(
            item_of_problem(p) for p in self.problems
        )

    @property
    def listed(self) -> tuple[TestResult, ...]:
        """Every result the manifest expects, as the reports' expected section lists them:
        expected failures and unsupported tests, then the failures not reproduced."""
        return self.expected + self.not_reproduced

    @property
    def expected_counts(self) -> str:
        """``3 failures, 1 unsupported tests[, 1 expected failures not reproduced]``."""
        failures = sum(t.outcome is Outcome.XFAIL for t in self.expected)
        text = f"{failures} failures, {len(self.expected) - failures} unsupported tests"
        missed = len(self.not_reproduced)
        return text + (f", {missed} expected failures not reproduced" if missed else "")

    @property
    def label(self) -> str:
        if self.blocked:
            why = ", ".join(PROBLEM_WORDS.get(code, code) for code in self.blocked)
            return f"FAIL ({why})"
        if self.manifest is None:
            verdict = "pass" if self.passed else f"FAIL ({self.count} unexpected results)"
            return f"the conformance verdict (--fail-on {self.fail_on}, no manifest): {verdict}"
        failures = sum(t.outcome is Outcome.XFAIL for t in self.expected)
        skipped = len(self.expected) - failures
        expected = f"{failures} expected failures, " if failures else ""
        expected += f"{skipped} tests the manifest marks unsupported, " if skipped else ""
        missed = len(self.not_reproduced)
        expected += f"{missed} expected failures not reproduced, " if missed else ""
        if self.passed:
            return f"within expectations ({expected}manifest {Path(self.manifest).name})"
        plural = "result" if self.count == 1 else "results"
        return f"{self.count} unexpected {plural} ({expected}manifest {Path(self.manifest).name})"

    def to_json(self) -> dict[str, object]:
        return {
            "fail_on": self.fail_on,
            "manifest": self.manifest,
            "passed": self.passed,
            "label": self.label,
            "unexpected": [item.to_json() for item in self.items],
            "expected": [
                {
                    "nodeid": t.nodeid,
                    "outcome": str(t.outcome),
                    "detail": t.detail,
                    "requirements": list(t.requirements),
                    "blame": list(t.blame),
                    "expectation": t.expectation,
                    "reason": t.expectation_reason,
                }
                for t in self.expected
            ],
            "not_reproduced": [
                {"nodeid": t.nodeid, "expectation": t.expectation, "reason": t.expectation_reason}
                for t in self.not_reproduced
            ],
            "problems": [dict(p) for p in self.problems],
            "blocked": list(self.blocked),
        }


def gate_of(record: RunRecord, fail_on: str | None = None, *, incomplete_ok: bool = False) -> Gate:
    """The gate of *record* under *fail_on* (default: what the run was gated on), failed
    by the run's problems as its exit status is."""
    fail_on = fail_on or fail_on_of(record)
    gated = gated_ids(fail_on)
    unexpected = tuple(t for t in record.tests if _unexpected(t, gated))
    expected = tuple(
        t
        for t in record.tests
        if t.expectation and t.outcome in (Outcome.XFAIL, Outcome.UNSUPPORTED)
    )
    problems = tuple(
        p for p in record.expectation_problems if p.get("kind") in ("stale", "unexpected-pass")
    )
    manifest = record.header.get("expectations")
    blocked = tuple(p.code for p in run_problems(record, incomplete_ok=incomplete_ok))
    missed = tuple(t for t in record.tests if t.not_reproduced)
    return Gate(
        fail_on,
        str(manifest) if manifest else None,
        unexpected,
        expected,
        problems,
        blocked,
        missed,
    )


def _unexpected(test: TestResult, gated: set[str]) -> bool:
    if test.outcome in BROKE or test.outcome is Outcome.XPASS:
        return True
    if test.outcome not in MISBEHAVED:
        return False
    blamed = set(test.blame or test.requirements)
    if test.expectation_blames:  # only what the entry does not name is unexpected (D-421)
        blamed -= set(test.expectation_blames)
        if not blamed:
            return False
    return bool(blamed & gated) or not blamed & known_ids()


def known_ids() -> set[str]:
    from dsh_conformance.spec import load_catalog

    return set(load_catalog().requirements)


def fail_on_of(record: RunRecord) -> str:
    """The ``--fail-on`` the run was judged by (the footer says it), else ``seed``."""
    value = str((record.footer or {}).get("fail_on", "seed"))
    return value if value in GATES else "seed"
