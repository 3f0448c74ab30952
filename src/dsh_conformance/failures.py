"""A check's failure and a result no check could read: what blame is attached to (D-160).

A failed check raises a ``CheckFailure`` of its requirements' own class, so Hypothesis keeps
one failure per requirement (D-420); ``blamed`` reads every id back out of an exception, its
causes and its groups; ``read`` turns a reading error into ``UnreadableResult``, which
blames nothing (D-251).  Split from ``checks`` (issue 44: one concept per module); imported
by it and re-exported there.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar

from dsh_conformance.adapters.contract import UnreadableResult

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


def show(value: object) -> str:
    """A value as JSON, what crossed the wire (a ``repr`` only for what JSON cannot hold)."""
    from dsh_conformance.reporting.escape import show_value

    return show_value(value, SHOWN)


def context(inputs: Mapping[str, object]) -> str:
    return "".join(f"\n  {name} = {show(value)}" for name, value in inputs.items())


def blame(exc: BaseException, requirement: str, inputs: Mapping[str, object] = {}) -> None:
    """Attribute *exc* to *requirement*, unless an inner check already did."""
    if getattr(exc, BLAME_ATTR, None):
        return
    setattr(exc, BLAME_ATTR, (requirement,))
    if not isinstance(exc, CheckFailure):  # a CheckFailure's own message says it all
        exc.add_note(
            f"[{requirement}] this check failed" + (":" + context(inputs) if inputs else "")
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
    found.add_note(f"  args = {show(args)}\n  result = {show(result)}")
    return found


def reading_error(
    exc: Exception, what: str, op: str, args: object, result: object
) -> UnreadableResult:
    return unreadable_result(op, args, result, f"{type(exc).__name__} {exc} while {what}")


def read(op: str, args: object, result: T, reader: Callable[[T], Any]) -> Any:
    """``reader(result)``; a ``KeyError``/``IndexError``/``TypeError``/``AttributeError``
    while reading becomes ``UnreadableResult`` naming *op*, *args* and *result*: the check
    could not read the result, which blames no requirement (D-251)."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    try:
        return reader(result)
    except READING_ERRORS as exc:
        raise reading_error(exc, "reading it", op, args, result) from exc


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
