"""The result taxonomy: what happened to one conformance test.

Bowtie splits caught from uncaught errors, WPT has PRECONDITION_FAILED for optional
features, pytest has strict xfail; this unifies them (decision D-121).  Compliance is
computed over *applicable* tests only: a declared-unsupported capability is not a failure.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from dsh_conformance.adapters.contract import AdapterFault, ImplementationError, UnreadableResult


class Outcome(StrEnum):
    """One test's outcome.  Values appear in records and reports: never rename."""

    PASS = "pass"
    FAIL = "fail"  #: an assertion failed: the implementation does not conform
    ERROR = "error"  #: a typed error where a result was expected (caught by the adapter)
    CRASH = "crash"  #: the adapter broke: exit, garbage, protocol violation (uncaught)
    TIMEOUT = "timeout"  #: no reply within the per-call timeout
    PROTOCOL = "protocol"  #: a result the check could not read (``UnreadableResult``)
    UNSUPPORTED = "unsupported"  #: the implementation does not declare the capability
    XFAIL = "xfail"  #: failed, as the expectation manifest says it would
    XPASS = "xpass"  #: passed although the manifest says it fails (fails the run)
    SKIPPED = "skipped"  #: skipped for another reason


#: Outcomes that make a run fail.
FAILING: Final = frozenset(
    {
        Outcome.FAIL,
        Outcome.ERROR,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.PROTOCOL,
        Outcome.XPASS,
    }
)
#: The adapter or the protocol broke, not the implementation's behaviour: such a test
#: blames no requirement (a run problem, D-212), whatever it cites.
BROKE: Final = frozenset({Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL})
#: What the implementation did wrong: a failed check or a typed error where a result was
#: due.  Conformance counts these whether or not a manifest expected them (D-210).
MISBEHAVED: Final = frozenset({Outcome.FAIL, Outcome.ERROR})
#: Outcomes of tests that ran against a capability the implementation declares.
APPLICABLE: Final = frozenset(
    {
        Outcome.PASS,
        Outcome.FAIL,
        Outcome.ERROR,
        Outcome.CRASH,
        Outcome.TIMEOUT,
        Outcome.PROTOCOL,
        Outcome.XFAIL,
        Outcome.XPASS,
    }
)

UNSUPPORTED_PREFIX: Final = "unsupported:"

#: What ``--fail-on`` can gate a run on (D-161): the seed's MUSTs always.
GATES: Final = ("seed", "seed-should", "profile", "all")


def _walk(exc: BaseException, seen: set[int]) -> list[BaseException]:
    if id(exc) in seen:
        return []
    seen.add(id(exc))
    found = [exc]
    for inner in getattr(exc, "exceptions", ()) or ():
        if isinstance(inner, BaseException):
            found += _walk(inner, seen)
    for linked in (exc.__cause__, exc.__context__):
        if linked is not None:
            found += _walk(linked, seen)
    return found


def classify_failure(exc: BaseException, fault: AdapterFault | None = None) -> Outcome:
    """The outcome of a test that raised *exc* (``fault``: the adapter's, if any)."""
    chain = _walk(exc, set())
    fault = fault or next((e for e in chain if isinstance(e, AdapterFault)), None)
    if fault is not None:
        return Outcome.TIMEOUT if fault.kind == "timeout" else Outcome.CRASH
    if any(isinstance(e, UnreadableResult) for e in chain):
        return Outcome.PROTOCOL
    if any(isinstance(e, ImplementationError) for e in chain):
        return Outcome.ERROR
    return Outcome.FAIL


def fault_of(exc: BaseException, fault: AdapterFault | None = None) -> AdapterFault | None:
    """The adapter fault behind *exc*: the guard's first fault of the test, else one in
    its chain.  Hypothesis wraps a fault that recurs from another line (the guard) in
    ``FlakyFailure``/``ExceptionGroup``; the record names the fault itself instead."""
    if fault is not None:
        return fault
    return next((e for e in _walk(exc, set()) if isinstance(e, AdapterFault)), None)


def unreadable_of(exc: BaseException) -> UnreadableResult | None:
    """The first ``UnreadableResult`` in *exc*'s chain or groups, if any."""
    return next((e for e in _walk(exc, set()) if isinstance(e, UnreadableResult)), None)


def broke(outcome: Outcome, detail: str = "") -> bool:
    """Whether a test with *outcome* (``detail``: the raw outcome behind an xfail) ended
    because the adapter or protocol broke: it judges no requirement (D-212)."""
    raw = Outcome(detail) if outcome is Outcome.XFAIL and detail else outcome
    return raw in BROKE


def classify_skip(reason: str) -> Outcome:
    text = reason.removeprefix("Skipped: ").strip()
    return Outcome.UNSUPPORTED if text.startswith(UNSUPPORTED_PREFIX) else Outcome.SKIPPED
