"""What fails the gate, one item each (D-211, D-461): every report lists these first.

Each item names its test (or manifest entry), the requirement ids it is about, what it
blames (nothing for a pass or a broken adapter, D-212) and why it fails the gate, in
the same words in the terminal, report.md, report.html, junit.xml and report.json.  A new
kind of gate result is one constant here and one branch of ``item_of_test`` or
``item_of_problem``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from attrs import field, frozen

from dsh_conformance.outcomes import BROKE, Outcome
from dsh_conformance.record import TestResult
from dsh_conformance.reporting import failuretext

#: A failure no manifest entry expects, at a level ``--fail-on`` counts.
UNEXPECTED_FAILURE: Final = "unexpected failure"
#: A test passed that the manifest says fails: the entry is out of date.
UNEXPECTED_PASS: Final = "unexpected pass"
#: A crash, timeout or unreadable result: it blames nothing (D-212).
ADAPTER_BROKE: Final = "adapter broke"
#: A manifest entry no test matches, or whose every test passed.
MANIFEST_PROBLEM: Final = "manifest problem"


@frozen
class GateItem:
    """One result that fails the gate."""

    kind: str
    #: The test's node id, or the manifest entry's id for a manifest problem.
    subject: str
    #: The test's outcome, or the manifest problem's kind (``stale``, ``unexpected-pass``).
    outcome: str
    #: What it is about: the ids a failure blames, the ids a passing or broken test cites.
    requirements: tuple[str, ...]
    #: What it blames: empty for a pass, a broken adapter and a manifest problem.
    blame: tuple[str, ...]
    #: Why it fails the gate, in one line.
    reason: str
    #: The manifest entry's own reason (an unexpected pass: why it was expected to fail).
    expectation: str = ""
    expectation_reason: str = ""
    test: TestResult | None = field(default=None, eq=False)

    @property
    def about(self) -> str:
        """``blames PROJ-004`` or ``about PROJ-004`` (what passed or broke blames nothing)."""
        ids = ", ".join(self.requirements)
        if not ids:
            return ""
        return f"blames {ids}" if self.blame else f"about {ids}"

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "nodeid": self.subject,
            "outcome": self.outcome,
            "requirements": list(self.requirements),
            "blame": list(self.blame),
            "reason": self.reason,
            "expectation": self.expectation,
            "expectation_reason": self.expectation_reason,
        }


def item_of_test(test: TestResult) -> GateItem:
    """The gate item of a test the gate counts (``gate._unexpected``)."""
    if test.outcome is Outcome.XPASS:
        return GateItem(
            UNEXPECTED_PASS,
            test.nodeid,
            str(test.outcome),
            tuple(test.judged or test.requirements),
            (),
            "passed, but the manifest expects it to fail: remove or narrow the entry",
            test.expectation,
            test.expectation_reason,
            test,
        )
    if test.outcome in BROKE:
        return GateItem(
            ADAPTER_BROKE,
            test.nodeid,
            str(test.outcome),
            test.requirements,
            (),
            f"{test.outcome}: {failuretext.headline(test)}",
            test=test,
        )
    return GateItem(
        UNEXPECTED_FAILURE,
        test.nodeid,
        str(test.outcome),
        tuple(test.blame or test.requirements),
        tuple(test.blame or test.requirements),
        failuretext.headline(test),
        test=test,
    )


def item_of_problem(problem: Mapping[str, object]) -> GateItem:
    """The gate item of a manifest problem (a stale or unexpectedly passing entry)."""
    return GateItem(
        MANIFEST_PROBLEM,
        str(problem.get("id", "")),
        str(problem.get("kind", "")),
        (),
        (),
        str(problem.get("message", "")),
        str(problem.get("id", "")),
    )
