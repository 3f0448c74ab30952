"""The outcome of one conformance test, from pytest's report of it (D-121).

The one place that decides pass, fail, error, crash, timeout, protocol, unsupported or
skipped; the expectation manifest turns some of them into xfail or xpass afterwards
(``expected.apply``).  What the exception *was* is read by ``outcomes`` (its chain,
its groups); this module maps pytest's phases and the guard's fault onto that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_conformance.outcomes import Outcome, classify_failure, classify_skip

if TYPE_CHECKING:
    import pytest

    from dsh_conformance.adapters.contract import AdapterFault


def skip_reason(report: pytest.TestReport) -> str:
    """Why pytest skipped the test (its ``pytest.skip`` text), else ''."""
    return str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else ""


def outcome_of(
    report: pytest.TestReport, exc: BaseException | None, fault: AdapterFault | None
) -> Outcome:
    """The outcome of a setup or call phase that did not simply pass its setup.

    *exc* is what the phase raised, *fault* the adapter fault the guard saw first in
    this test (a fault Hypothesis wrapped still names the crash or the timeout).
    """
    if report.passed:
        return Outcome.PASS
    if report.skipped:
        if hasattr(report, "wasxfail"):
            return Outcome.XFAIL
        return classify_skip(skip_reason(report))
    return classify_failure(exc, fault) if exc is not None else Outcome.FAIL


def teardown_outcome(report: pytest.TestReport, outcome: Outcome | None) -> Outcome | None:
    """A failed teardown turns a passing test into an ``error``; else *outcome* stands."""
    if report.failed and outcome in (None, Outcome.PASS):
        return Outcome.ERROR
    return outcome
