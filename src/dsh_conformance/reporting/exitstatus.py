"""The exit status of a run (D-176): its first run problem's, else the gate's (D-211)."""

from __future__ import annotations

from dsh_conformance.errors import EX_FAILURES
from dsh_conformance.outcomes import BROKE, FAILING
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.gate import gate_of
from dsh_conformance.reporting.problems import run_problems


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


def _failed(record: RunRecord, gate: str | None) -> bool:
    """The gate (D-211): an expectation problem or an unexpected result fails it; an
    expected failure never does.  Without *gate*, any unexpected failing test does."""
    if record.expectation_problems:
        return True
    if any(t.outcome in BROKE for t in record.tests):
        return True  # the adapter broke (a run problem too)
    if gate is None:
        return any(t.outcome in FAILING for t in record.tests)
    judged = gate_of(record, gate, incomplete_ok=True)  # run problems: run_exit_status's
    return bool(judged.unexpected or judged.problems)
