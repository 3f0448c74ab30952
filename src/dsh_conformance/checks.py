"""Blame per check: each assertion names exactly the requirement it proves (D-160).

A conformance test may cite several requirements; when it fails, only the requirement
whose check failed is blamed, so an implementation that meets URI-004 is never reported
failing it because URI-005 failed in the same test.  Failures carry what a reader needs
to act: the requirement, the input, what was expected and what came back.

    with check("URI-004", uri=uri):
        assert "=" not in uri
    expect_equal("URI-002", decoded, sid, input=sid)
    expect_error("URI-005", impl, "uri.decode", {"uri": 1}, codes={INVALID})

Imported by every conformance module: it imports nothing heavy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from dsh_conformance.adapters.client import Implementation

#: The attribute a failing check sets on the exception it lets through.
BLAME_ATTR: Final = "__dsh_blame__"
#: How much of one value a failure message shows.
SHOWN: Final = 600


class CheckFailure(AssertionError):
    """A check that failed: an ``AssertionError`` that already names its requirement."""


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
    stack = [exc]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        found.extend(getattr(current, BLAME_ATTR, ()) or ())
        stack.extend(
            e for e in getattr(current, "exceptions", ()) or () if isinstance(e, BaseException)
        )
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return tuple(dict.fromkeys(found))


@contextmanager
def check(requirement: str, **inputs: object) -> Iterator[None]:
    """Blame any failure inside the block on *requirement*; *inputs* are shown with it."""
    try:
        yield
    except Exception as exc:
        blame(exc, requirement, inputs)
        raise


def fail(requirement: str, message: str, **inputs: object) -> CheckFailure:
    """A failure of *requirement*, ready to raise."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    exc = CheckFailure(f"[{requirement}] {message}{_context(inputs)}")
    blame(exc, requirement)
    return exc


def expect(requirement: str, condition: object, message: str, **inputs: object) -> None:
    """Fail *requirement* with *message* unless *condition* holds."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    if not condition:
        raise fail(requirement, message, **inputs)


def expect_equal(
    requirement: str, actual: object, expected: object, what: str = "result", **inputs: object
) -> None:
    """Fail *requirement* unless ``actual == expected``, showing both."""
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    if actual != expected:
        headline = f"{what} differs from what the requirement demands"
        shown_expected, shown_actual = _show(expected), _show(actual)
        if len(shown_expected) + len(shown_actual) <= 160:
            headline = f"{what}: expected {shown_expected}, got {shown_actual}"
        raise fail(
            requirement,
            headline,
            **inputs,
            expected=expected,
            actual=actual,
        )


def expect_error(
    requirement: str,
    impl: Implementation,
    op: str,
    args: Mapping[str, Any],
    codes: Collection[str] | None = None,
) -> str:
    """Fail *requirement* unless *op* fails with a typed error (one of *codes*, if given).

    Returns the code.  When the call succeeds, the failure shows what it returned.
    """
    __tracebackhide__ = True  # pytest shows the failing test line, not this helper
    from dsh_conformance.adapters.contract import ImplementationError

    try:
        result = impl.adapter.call(op, dict(args))
    except ImplementationError as exc:
        if codes is not None and exc.code not in codes:
            raise fail(
                requirement,
                f"{op} failed with the wrong error code",
                args=dict(args),
                expected=sorted(codes),
                actual=exc.code,
            ) from None
        return exc.code
    expected = sorted(codes) if codes is not None else "a typed error"
    raise fail(
        requirement,
        f"{op} succeeded where it must fail",
        args=dict(args),
        expected=expected,
        returned=result,
    )


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
    if len(failures) == 1:
        raise failures[0]
    if failures:
        raise ExceptionGroup("several checks failed", failures)


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
