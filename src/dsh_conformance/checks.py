"""Blame per check: each assertion names exactly the requirement it proves (D-160).

A conformance test may cite several requirements; when it fails, only the requirement
whose check failed is blamed, so an implementation that meets URI-004 is never reported
failing it because URI-005 failed in the same test.  Failures carry what a reader needs
to act: the requirement, the input, what was expected and what came back.

    with check("URI-004", uri=uri):
        assert "=" not in uri
    expect_equal("URI-002", decoded, sid, input=sid)
    expect_error("URI-005", impl, "uri.decode", {"uri": 1}, codes={INVALID})
    label = read("prepare", args, result, lambda r: r["sources"][0]["label"])

Every check of a test runs (issue 36, D-250): inside ``collect()`` (the plugin opens one
per example) a failed check is recorded and the test goes on, so one failure neither
hides another defect nor leaves a cited id inconclusive; the example then fails with all
of them.  A result a check cannot read (``UnreadableResult``: it breaks its op's schema,
or a ``KeyError``/``TypeError``/``IndexError`` while a check reads it) blames no
requirement: it is a protocol problem of the run (D-251).  Each check notes its id as
run, and as unsettled when it fails or stops: the harness records the ids a failed test
still passed, so a cited id reads inconclusive only when its check never ran (D-330).

Imported by every conformance module: it imports nothing heavy.  A failure's identity and
reading live in ``failures``, what a test judged in ``ran``, reviews in ``reviews``; every
name a test uses is re-exported here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.failures import (
    BLAME_ATTR,
    READING_ERRORS,
    SHOWN,
    CheckFailure,
    blame,
    blamed,
    failure_class,
    failure_lines,
    identified,
    read,
    unreadable,
    unreadable_result,
)
from dsh_conformance.failures import context as _context
from dsh_conformance.failures import reading_error as _reading
from dsh_conformance.failures import show as _show
from dsh_conformance.ran import ran as _ran
from dsh_conformance.ran import take_passed
from dsh_conformance.ran import unsettled as _unsettled
from dsh_conformance.reviews import review, take_reviews, text_sha256
from dsh_conformance.unjudged import UnreadableField

if TYPE_CHECKING:
    from dsh_conformance.adapters.client import Implementation


T = TypeVar("T")

__all__ = [
    "BLAME_ATTR",
    "READING_ERRORS",
    "SHOWN",
    "CheckFailure",
    "blame",
    "blamed",
    "check",
    "collect",
    "collecting",
    "every",
    "expect",
    "expect_equal",
    "expect_error",
    "fail",
    "fail_all",
    "failure_class",
    "failure_lines",
    "hard",
    "identified",
    "read",
    "review",
    "take_passed",
    "take_reviews",
    "text_sha256",
    "unreadable",
    "unreadable_result",
]


# --- soft checks: every check of an example runs (D-250) ----------------------------------

#: The failures collected by the open ``collect()`` blocks, innermost last; None for a
#: ``hard()`` block, where the first failure stops the test.
_COLLECTED: list[list[Exception] | None] = []


def _judges_the_seed(exc: BaseException) -> bool:
    """Whether *exc* blames a requirement of a note's sentence (the seed verdict)."""
    from dsh_conformance.spec import load_catalog

    catalog = load_catalog().requirements
    return any(getattr(catalog.get(rid), "verdict", "") == "seed" for rid in blamed(exc))


def _record(exc: Exception) -> bool:
    """Keep *exc* (a blamed check failure) for the open collector; False when none is
    open and the caller must raise it.

    A profile check never stops a seed check; once a seed check of the example failed,
    a later profile check's failure is moot (it judges a state the seed already
    rejected: no error where a code is pinned, a list with an extra item) and is left
    out, so it neither adds collateral blame nor hides anything of the seed (D-250)."""
    if not _COLLECTED or _COLLECTED[-1] is None:
        return False
    found = _COLLECTED[-1]
    if any(_judges_the_seed(e) for e in found) and not _judges_the_seed(exc):
        return True
    found.append(exc)
    return True


@contextmanager
def hard() -> Iterator[None]:
    """Inside the block the first failed check stops the test, as outside any collector:
    for programs of steps whose later steps run on the state a failure left."""
    _COLLECTED.append(None)
    try:
        yield
    finally:
        _COLLECTED.pop()


def _raise_all(failures: Sequence[Exception]) -> None:
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise ExceptionGroup(f"{len(failures)} checks failed", list(failures))


def _without_python_reprs(exc: AssertionError) -> None:
    """A bare ``assert`` that failed says what pytest's rewriting made of it, Python reprs
    of the values (``assert [{'role': 'us...``): say the condition as written instead (the
    check's inputs, shown as JSON beside it, hold the values)."""
    import linecache

    if isinstance(exc, CheckFailure) or not str(exc).startswith("assert "):
        return
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip() if tb else ""
    condition = line.removeprefix("assert ").rstrip(",( ") or "a condition"
    exc.args = (f"not so: {condition}",)


def _could_not_judge(requirement: str, exc: Exception) -> bool:
    """Note that *requirement*'s check could not read a field (the host's unreadable field
    or the suite's reading error, D-521/D-522); True when an open collector lets the test
    go on past the check, False when the caller must raise."""
    from dsh_conformance import unjudged

    if not _COLLECTED:
        return False  # outside a conformance test: the old protocol problem
    if isinstance(exc, UnreadableField):
        unjudged.note(exc.entry(requirement))
    else:
        unjudged.note(unjudged.reading_entry(exc, requirement))
    exc.__dsh_noted__ = True  # type: ignore[attr-defined]
    return _COLLECTED[-1] is not None


def _stopped_unjudged(exc: Exception) -> bool:
    """Whether *exc*, ending a collected block, is a field no check could read or a
    reading error of the test's own (noted as unjudged: the block ends, nothing blamed)."""
    from dsh_conformance import unjudged

    if getattr(exc, "__dsh_noted__", False):
        return True
    if isinstance(exc, UnreadableField):
        unjudged.note(exc.entry())
        return True
    if isinstance(exc, READING_ERRORS):
        unjudged.note(unjudged.reading_entry(exc))
        return True
    return False


@contextmanager
def collect() -> Iterator[None]:
    """Run the block with soft checks: a failed ``check``/``expect*`` is recorded and the
    block goes on; at its end one failure is raised as it is, several as one
    ``ExceptionGroup`` whose members keep their blame (D-250).

    What the block raises itself ends it: after recorded failures, an unblamed error is
    their consequence (a check found the result wrong, a later line could not use it)
    and is shown as a note; with none recorded, an unblamed reading error becomes
    ``UnreadableResult`` (D-251) and anything else propagates as it is.
    """
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    found: list[Exception] = []
    _COLLECTED.append(found)
    try:
        yield
    except Exception as exc:
        _COLLECTED.pop()
        if blamed(exc):
            _raise_all([*found, exc])
        if found:
            found[-1].add_note(f"then the test stopped: {type(exc).__name__}: {exc}")
            _raise_all(found)
        if _stopped_unjudged(exc):  # what ran stands; the rest is unjudged (D-521, D-522)
            return
        raise
    except BaseException:  # pytest.skip/fail, KeyboardInterrupt: no collector may outlive it
        _COLLECTED.pop()
        raise
    else:
        _COLLECTED.pop()
    _raise_all(found)


def collecting(test: Callable[..., T]) -> Callable[..., T]:
    """*test* run inside ``collect()`` each time it is called (once per Hypothesis
    example); wrapping an already wrapped test changes nothing."""
    if getattr(test, "__dsh_collects__", False):
        return test

    @functools.wraps(test)
    def collected(*args: Any, **kwargs: Any) -> T:
        __tracebackhide__ = True  # pytest shows the failing test line, not this helper
        with collect():
            return test(*args, **kwargs)

    collected.__dsh_collects__ = True  # type: ignore[attr-defined]
    return collected


@contextmanager
def check(requirement: str, **inputs: object) -> Iterator[None]:
    """Blame any failure inside the block on *requirement*; *inputs* are shown with it.

    A result the block cannot read (``UnreadableResult``, or a reading error) blames no
    requirement (D-251); inside ``collect()`` a failed assertion is recorded and the test
    goes on after the block (D-250).
    """
    _ran(requirement)
    try:
        yield
    except UnreadableResult:
        _unsettled(requirement)
        raise
    except (*READING_ERRORS, UnreadableField) as exc:
        _unsettled(requirement)
        if blamed(exc):  # an inner check's failure, already judged
            raise
        if _could_not_judge(requirement, exc):  # only this check judges nothing (D-521)
            return
        if isinstance(exc, UnreadableField):
            raise
        raise _reading(exc, f"checking {requirement}", "a result", dict(inputs), None) from exc
    except Exception as exc:
        _unsettled(requirement)
        if isinstance(exc, AssertionError):
            _without_python_reprs(exc)
        blame(exc, requirement, inputs)
        if not isinstance(exc, AssertionError):
            raise
        failed = identified(exc)
        if _record(failed):
            return
        if failed is exc:
            raise
        raise failed from exc.__cause__  # the same failure, of its requirement's type


def fail(requirement: str, message: str, **inputs: object) -> CheckFailure:
    """A failure of *requirement*, ready to raise."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    exc = failure_class((requirement,))(f"[{requirement}] {message}{_context(inputs)}")
    blame(exc, requirement)
    _unsettled(requirement)
    return exc


def fail_all(requirements: Sequence[str], message: str, **inputs: object) -> CheckFailure:
    """One failure that breaks each of *requirements* at once (a static case's cited ids
    when the call succeeds where the case says it fails, or the other way round)."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    ids = tuple(dict.fromkeys(requirements))
    exc = failure_class(ids)(f"[{', '.join(ids)}] {message}{_context(inputs)}")
    setattr(exc, BLAME_ATTR, ids)
    _unsettled(*ids)
    return exc


def _soft(exc: CheckFailure) -> None:
    """Record *exc* in the open collector, else raise it."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    if not _record(exc):
        raise exc


def expect(requirement: str, condition: object, message: str, **inputs: object) -> None:
    """Fail *requirement* with *message* unless *condition* holds."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    _ran(requirement)
    if not condition:
        _soft(fail(requirement, message, **inputs))


def expect_equal(
    requirement: str, actual: object, expected: object, what: str = "result", **inputs: object
) -> None:
    """Fail *requirement* unless ``actual == expected``, showing both."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    _ran(requirement)
    try:
        differs = actual != expected
    except UnreadableField as exc:  # a field of *actual* cannot be read (D-522)
        if _could_not_judge(requirement, exc):
            _unsettled(requirement)
            return
        raise
    if differs:
        headline = f"{what} differs from what the requirement demands"
        shown_expected, shown_actual = _show(expected), _show(actual)
        if len(shown_expected) + len(shown_actual) <= 160:
            headline = f"{what}: expected {shown_expected}, got {shown_actual}"
        _soft(fail(requirement, headline, **inputs, expected=expected, actual=actual))


def expect_error(
    requirement: str,
    impl: Implementation,
    op: str,
    args: Mapping[str, Any],
    codes: Collection[str] | None = None,
) -> str | None:
    """Fail *requirement* unless *op* fails with a typed error (one of *codes*, if given).

    Returns the code, or None when the call succeeded (the failure, recorded by an open
    collector, shows what it returned): a check of the code has nothing to judge then.
    """
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    from dsh_conformance.adapters.contract import ImplementationError

    _ran(requirement)
    try:
        result = impl.adapter.call(op, dict(args))
    except ImplementationError as exc:
        if codes is not None and exc.code not in codes:
            _soft(
                fail(
                    requirement,
                    f"{op} failed with the wrong error code",
                    args=dict(args),
                    expected=sorted(codes),
                    actual=exc.code,
                )
            )
        return exc.code
    except BaseException:
        _unsettled(requirement)  # the call broke: nothing concluded
        raise
    expected = sorted(codes) if codes is not None else "a typed error"
    _soft(
        fail(
            requirement,
            f"{op} succeeded where it must fail",
            args=dict(args),
            expected=expected,
            returned=result,
        )
    )
    return None


def every(*checks: Callable[[], object]) -> None:
    """Run every one of *checks* (each a check of its own requirement), then fail with all
    that failed: one requirement's failure never hides another's (issue 25).  A single
    failure is raised as it is; several as one ExceptionGroup, whose members keep their
    own blame."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    failures: list[Exception] = []
    for one in checks:
        try:
            one()
        except Exception as exc:
            failures.append(exc)
    _raise_all(failures)
