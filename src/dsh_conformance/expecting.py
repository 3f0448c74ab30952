"""What an expectation entry makes of a test's outcome, for the gate only (D-210, D-421, D-422).

The conformance verdicts never read this: they are computed from what the implementation
did.  An ``xfail`` entry turns a failure into ``xfail`` when it blames only what the entry
names (D-421); a failure blaming anything else stays a failure, an unexpected result.  A
property test whose examples found nothing under a non-strict entry passed: the record
says "expected failure not reproduced" and the gate lists it without failing (D-422); a
fixed test that passes, or a strict entry's property, is an unexpected pass (``xpass``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrs import evolve, frozen

from dsh_conformance.outcomes import BROKE, FAILING, Outcome

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Entry


@frozen
class Settled:
    """A test's outcome once its entry applied, and what the record says of it."""

    outcome: Outcome
    #: The raw outcome behind an ``xfail``, else empty.
    detail: str = ""
    #: A line the record's message starts with (why the result is what it is), or empty.
    note: str = ""
    #: The property found no failure the non-strict entry expects (D-422).
    not_reproduced: bool = False
    #: What the entry lets a failure blame (D-421); empty when any.
    expected_blame: tuple[str, ...] = ()


def unexpected_blame(allowed: Sequence[str], blame: Sequence[str]) -> tuple[str, ...]:
    """The ids of *blame* not in *allowed* (none when *allowed* is empty: any may fail)."""
    return tuple(r for r in blame if allowed and r not in allowed)


def widened(entry: Entry, blame: Sequence[str], expected: Sequence[str]) -> Entry:
    """*entry* naming too what *blame* has beyond *expected* (the manifest's ids for the
    test), for ``--write-expectations``; an entry that lets any failure blame anything
    stays so."""
    stray = unexpected_blame(expected, blame)
    if not stray or not entry.expected_blame:
        return entry
    return evolve(entry, blames=tuple(dict.fromkeys((*entry.blames, *stray))))


def settle(
    entry: Entry | None,
    outcome: Outcome,
    blame: Sequence[str],
    *,
    expected: Sequence[str] = (),
    property_test: bool = False,
) -> Settled:
    """*outcome* (and its *blame*) under *entry*, the entry that applies to the test;
    *expected* is what the manifest lets its failure blame (``Manifest.expected_blame``:
    every matching entry's ids, empty for any) (D-421, D-422)."""
    if entry is None or entry.status != "xfail":
        return Settled(outcome)
    expected = tuple(expected)
    if outcome in FAILING:
        stray = () if outcome in BROKE else unexpected_blame(expected, blame)
        if stray:
            note = (
                f"unexpected failure: {entry.id} expects only {', '.join(expected)} to "
                f"fail here, not {', '.join(stray)}"
            )
            return Settled(outcome, note=note, expected_blame=expected)
        return Settled(Outcome.XFAIL, detail=str(outcome), expected_blame=expected)
    if outcome is Outcome.PASS and not entry.is_requirement:
        if property_test and not entry.strict:
            note = (
                f"expected failure not reproduced: {entry.id} expects a failure, and no "
                "example of this run found one"
            )
            return Settled(outcome, note=note, not_reproduced=True, expected_blame=expected)
        return Settled(Outcome.XPASS, note=f"unexpected pass: the manifest says {entry.id} fails")
    return Settled(outcome)
