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

Imported by every conformance module: it imports nothing heavy.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, TypeVar

from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.unjudged import UnreadableField

if TYPE_CHECKING:
    from dsh_conformance.adapters.client import Implementation

#: The attribute a failing check sets on the exception it lets through.
BLAME_ATTR: Final = "__dsh_blame__"
#: How much of one value a failure message shows.
SHOWN: Final = 600
#: What a check raises when it reads past what a result holds: a reading error, never
#: a requirement's failure (D-251).
READING_ERRORS: Final = (KeyError, IndexError, TypeError, AttributeError)

T = TypeVar("T")


class CheckFailure(AssertionError):
    """A check that failed: an ``AssertionError`` that already names its requirement.

    A failed check raises the subclass of its requirements (``failure_class``), so a
    failure's type is its identity (issue 41)."""

    #: The requirements a failure of this class breaks; empty on the base class.
    requirements: tuple[str, ...] = ()


# --- a failure's identity is its requirement (issue 41, D-420) -----------------------------


@functools.cache
def failure_class(requirements: tuple[str, ...]) -> type[CheckFailure]:
    """The ``CheckFailure`` subclass of *requirements*, one class per set (cached).

    Hypothesis tells failures apart by their type and raising line (its interesting
    origin); every soft check failure is raised from one line of ``_raise_all``, so
    without a type of its own each requirement's failure looked like one bug and
    Hypothesis kept only the last example's.  Named ``CheckFailure`` like its base: a
    report reads the requirement from the message, never a class name."""

    class Failure(CheckFailure):
        pass

    Failure.requirements = requirements
    Failure.__name__ = Failure.__qualname__ = "CheckFailure"
    return Failure


def identified(exc: AssertionError) -> AssertionError:
    """*exc*, a blamed assertion, as an instance of its requirements' ``failure_class``:
    itself when it already is one, else a copy (message, notes, traceback, blame, cause)
    of the other type."""
    ids = tuple(getattr(exc, BLAME_ATTR, ()) or ())
    if not ids or type(exc) is failure_class(ids):
        return exc
    copy = failure_class(ids)(*exc.args)
    setattr(copy, BLAME_ATTR, ids)
    for note in getattr(exc, "__notes__", ()) or ():
        copy.add_note(note)
    copy.__cause__, copy.__context__ = exc.__cause__, exc.__context__
    copy.__suppress_context__ = exc.__suppress_context__
    return copy.with_traceback(exc.__traceback__)


def _show(value: object) -> str:
    """A value as JSON, what crossed the wire (a ``repr`` only for what JSON cannot hold)."""
    from dsh_conformance.reporting.escape import show_value

    return show_value(value, SHOWN)


def _context(inputs: Mapping[str, object]) -> str:
    return "".join(f"\n  {name} = {_show(value)}" for name, value in inputs.items())


def blame(exc: BaseException, requirement: str, inputs: Mapping[str, object] = {}) -> None:
    """Attribute *exc* to *requirement*, unless an inner check already did."""
    if getattr(exc, BLAME_ATTR, None):
        return
    setattr(exc, BLAME_ATTR, (requirement,))
    if not isinstance(exc, CheckFailure):  # a CheckFailure's own message says it all
        exc.add_note(
            f"[{requirement}] this check failed" + (":" + _context(inputs) if inputs else "")
        )


def blamed(exc: BaseException) -> tuple[str, ...]:
    """Every requirement blamed by *exc*, its causes and the members of its groups."""
    found: list[str] = []
    seen: set[int] = set()
    queue = [exc]
    while queue:
        current = queue.pop(0)  # group members in their order
        if id(current) in seen:
            continue
        seen.add(id(current))
        found.extend(getattr(current, BLAME_ATTR, ()) or ())
        queue.extend(
            e for e in getattr(current, "exceptions", ()) or () if isinstance(e, BaseException)
        )
        queue.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return tuple(dict.fromkeys(found))


def unreadable(exc: BaseException) -> UnreadableResult | None:
    """The ``UnreadableResult`` behind *exc* (itself, a cause or a group member), if the
    failure is one a check could not read and no check blamed."""
    if blamed(exc):
        return None
    stack: list[BaseException] = [exc]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, UnreadableResult):
            return current
        stack.extend(
            e for e in getattr(current, "exceptions", ()) or () if isinstance(e, BaseException)
        )
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


def unreadable_result(op: str, args: object, result: object, reason: str) -> UnreadableResult:
    """``UnreadableResult`` whose notes show the op's arguments and result beside why."""
    found = UnreadableResult(op, args, result, reason)
    found.add_note(f"  args = {_show(args)}\n  result = {_show(result)}")
    return found


def _reading(exc: Exception, what: str, op: str, args: object, result: object) -> UnreadableResult:
    return unreadable_result(op, args, result, f"{type(exc).__name__} {exc} while {what}")


def read(op: str, args: object, result: T, reader: Callable[[T], Any]) -> Any:
    """``reader(result)``; a ``KeyError``/``IndexError``/``TypeError``/``AttributeError``
    while reading becomes ``UnreadableResult`` naming *op*, *args* and *result*: the check
    could not read the result, which blames no requirement (D-251)."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    try:
        return reader(result)
    except READING_ERRORS as exc:
        raise _reading(exc, "reading it", op, args, result) from exc


# --- what a test judged: the ids whose checks ran (D-330) --------------------------------

#: The requirements whose checks ran in the running test, in first-run order.
_RAN: dict[str, None] = {}
#: Those of them a check did not pass: it failed, or stopped before it concluded.
_UNSETTLED: set[str] = set()


def _ran(requirement: str) -> None:
    _RAN.setdefault(requirement, None)


def _unsettled(*requirements: str) -> None:
    for requirement in requirements:
        _RAN.setdefault(requirement, None)
        _UNSETTLED.add(requirement)


def take_passed() -> tuple[str, ...]:
    """The requirements whose every check that ran since the last call passed (the
    harness calls it per test): a failed test still judges them as passed, while an id
    whose check never ran stays unjudged (D-330)."""
    passed = tuple(r for r in _RAN if r not in _UNSETTLED)
    _RAN.clear()
    _UNSETTLED.clear()
    return passed


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


def failure_lines(exc: BaseException) -> list[str]:
    """One line per failure in *exc*: itself, or every leaf of its groups (Hypothesis's
    "found 2 distinct failures", a collector's several checks), so a record's message
    shows each of them, not only the group's headline."""
    leaves: list[BaseException] = []
    stack = [exc]
    while stack:
        current = stack.pop(0)
        members = getattr(current, "exceptions", ()) or ()
        inner = [e for e in members if isinstance(e, BaseException)]
        if inner:
            stack[:0] = inner
        else:
            leaves.append(current)
    lines = []
    for leaf in leaves:
        text = str(leaf).strip().splitlines()
        head = text[0] if text else ""
        lines.append(f"{type(leaf).__name__}: {head}" if head else type(leaf).__name__)
    return lines


# --- reviews: the meaning of natural-language text (issue 25, D-199) ----------------------

#: Reviews requested by the running test, taken by the harness when it ends.
_REVIEWS: list[dict[str, Any]] = []


def text_sha256(text: str) -> str:
    """The sha256 a host's review names: of the text's UTF-8 bytes (a lone surrogate as
    its three WTF-8 bytes, so no two texts share a digest)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def review(requirement: str, text: str, hints: Sequence[str] = ()) -> None:
    """Ask a person whether *text* says what *requirement*'s sentence of a note asks (D-199).

    A program cannot decide what a sentence means, so this never passes or fails: the
    report shows *text* beside the sentence (its clause, else its quote, from the
    catalog) with *hints* (what a keyword reading missed), and the host's manifest
    records a review of exactly this text (its sha256).
    """
    from dsh_conformance.spec import load_catalog

    req = load_catalog().requirements[requirement]
    _ran(requirement)  # asking for a review is all a test does for it, as when it passes
    sentence = str(getattr(req, "clause", "") or req.quote)
    item = {
        "requirement": requirement,
        "sha256": text_sha256(text),
        "text": text,
        "sentence": sentence,
        "hints": list(hints),
    }
    if item not in _REVIEWS:
        _REVIEWS.append(item)


def take_reviews() -> list[dict[str, Any]]:
    """The reviews requested since the last call (the harness calls it per test)."""
    taken = list(_REVIEWS)
    _REVIEWS.clear()
    return taken
