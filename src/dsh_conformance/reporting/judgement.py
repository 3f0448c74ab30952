"""The one verdict model of a run (D-214): rows, both verdicts, the gate, the run
problems, the coverage notices and the exit status, computed once; every renderer only
renders it."""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.exitstatus import run_exit_status
from dsh_conformance.reporting.gate import Gate, fail_on_of, gate_of
from dsh_conformance.reporting.gateitems import GateItem
from dsh_conformance.reporting.problems import RunProblem, run_problems
from dsh_conformance.reporting.ranking import gate_ordered
from dsh_conformance.reporting.reviews import ReviewItem, review_items
from dsh_conformance.reporting.rows import RequirementRow, requirement_rows
from dsh_conformance.reporting.verdict import Verdict, verdicts
from dsh_conformance.unjudged import notices as unreadable_notices


@frozen
class Judgement:
    """Everything a report says about a run, computed once (D-214): every renderer
    (terminal, Markdown, HTML, JUnit, JSON, badge) only renders it."""

    record: RunRecord
    rows: tuple[RequirementRow, ...]
    seed: Verdict
    profile: Verdict
    gate: Gate
    problems: tuple[RunProblem, ...]
    notices: tuple[str, ...]
    exit_status: int
    #: Texts a person reviews (D-199), in run order.
    reviews: tuple[ReviewItem, ...] = ()

    @property
    def verdicts(self) -> tuple[Verdict, Verdict]:
        return self.seed, self.profile

    def ordered(self, tests: Sequence[TestResult]) -> list[tuple[str, TestResult]]:
        """*tests* in gate order (D-179), each with its rank's word."""
        return gate_ordered(self.seed, self.profile, tests)

    @property
    def gate_items(self) -> tuple[GateItem, ...]:
        """What fails the gate, in gate order (D-179: a broken adapter first, then seed
        MUSTs, ...), manifest problems last: what every report lists first (D-461)."""
        ranked = {t.nodeid: i for i, (_, t) in enumerate(self.ordered(self.gate.unexpected))}
        return tuple(
            sorted(self.gate.items, key=lambda item: ranked.get(item.subject, len(ranked)))
        )

    def to_json(self) -> dict[str, object]:
        return {
            "verdicts": {v.name: v.to_json() for v in self.verdicts},
            "gate": self.gate.to_json(),
            "notices": list(self.notices),
            "exit_status": self.exit_status,
        }


def judge(
    record: RunRecord, fail_on: str | None = None, *, incomplete_ok: bool = False
) -> Judgement:
    """The one verdict model of *record* (D-214)."""
    rows = tuple(requirement_rows(record))
    seed, profile = verdicts(record, rows)
    fail_on = fail_on or fail_on_of(record)
    return Judgement(
        record=record,
        rows=rows,
        seed=seed,
        profile=profile,
        gate=gate_of(record, fail_on, incomplete_ok=incomplete_ok),
        problems=run_problems(record, incomplete_ok=incomplete_ok),
        notices=(*coverage_notices(record), *unreadable_notices(record.tests)),
        exit_status=run_exit_status(record, fail_on, incomplete_ok=incomplete_ok),
        reviews=tuple(review_items(record)),
    )


def coverage_notices(record: RunRecord) -> list[str]:
    """Coverage the handshake lost (D-216): tests unsupported because a capability is not
    declared, and declared capability names no test knows (a near miss named)."""
    import difflib
    import re

    from dsh_conformance.adapters.contract import CAPABILITIES

    adapter = record.header.get("adapter") or {}
    declared = [str(c) for c in adapter.get("capabilities") or ()]
    out = []
    for name in declared:
        if name not in CAPABILITIES:
            near = difflib.get_close_matches(name, list(CAPABILITIES), n=1, cutoff=0.6)
            hint = f": did you mean `{near[0]}`?" if near else " (ignored)"
            out.append(f"the handshake declares `{name}`, a capability no test knows{hint}")
    lost: dict[str, list[TestResult]] = {}
    pattern = re.compile(r"does not declare (.+)$")
    for test in record.tests:
        if test.outcome is not Outcome.UNSUPPORTED or test.expectation:
            continue
        found = pattern.search(test.message)
        for cap in found.group(1).split(", ") if found else ():
            lost.setdefault(cap.strip(), []).append(test)
    if lost:
        total = len({t.nodeid for tests in lost.values() for t in tests})
        parts = [
            f"`{cap}` {len(tests)}"
            for cap, tests in sorted(lost.items(), key=lambda item: (-len(item[1]), item[0]))
        ]
        out.append(
            f"coverage lost: {total} tests need capabilities the handshake does not declare "
            f"(tests per capability: {', '.join(parts)}); declare each the implementation "
            "offers"
        )
    return out
