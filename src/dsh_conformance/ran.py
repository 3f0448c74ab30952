"""What a test judged: the requirements whose checks ran, and which of them passed (D-330).

A failed test still judges as passed the ids whose every check passed; an id whose check
never ran stays unjudged.  State of the running test, taken by the harness per test.
"""

from __future__ import annotations

#: The requirements whose checks ran in the running test, in first-run order.
_RAN: dict[str, None] = {}
#: Those of them a check did not pass: it failed, or stopped before it concluded.
_UNSETTLED: set[str] = set()


def ran(requirement: str) -> None:
    """Note that a check of *requirement* ran in the running test (D-330)."""
    _RAN.setdefault(requirement, None)


def unsettled(*requirements: str) -> None:
    """Note that *requirements* ran and did not pass: a check failed or stopped."""
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
