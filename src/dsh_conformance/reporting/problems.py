"""Run problems (D-175, D-212): why a run cannot pass whatever its tests say."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final

from attrs import frozen

from dsh_conformance.errors import (
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_NOTHING,
)
from dsh_conformance.outcomes import APPLICABLE, BROKE, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.rows import sort_key


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
