"""How long Hypothesis may shrink a failing example, and telling the screen it does (D-312).

Hypothesis shrinks each failing test for up to five minutes (its engine's
``MAX_SHRINKING_SECONDS``), so an implementation with a handful of failures took minutes
where a passing one takes seconds, with nothing on screen saying why.  A conformance
run caps shrinking per test at ``SHRINK_SECONDS`` (a host author needs a small failing
input, not the smallest), and lets the progress display say when a test is shrinking.

Both reach into Hypothesis' engine, which has no public knob for either: each step is
guarded, so a Hypothesis without these names runs unchanged (uncapped, unannounced).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import Any, Final

#: Longest a conformance run shrinks one failing test, in seconds.
SHRINK_SECONDS: Final = 10

_listeners: list[Callable[[], None]] = []
#: The engine's shrinking step and the state that says something failed, newest first.
_SHRINK_NAMES: Final = (
    ("shrink_interesting_test_cases", "interesting_test_cases"),
    ("shrink_interesting_examples", "interesting_examples"),
)


def shrink_seconds() -> float:
    """The cap in force: ``$DSH_SHRINK_SECONDS`` when set (300 is Hypothesis' own), else
    ``SHRINK_SECONDS``."""
    try:
        return max(0.0, float(os.environ.get("DSH_SHRINK_SECONDS", SHRINK_SECONDS)))
    except ValueError:
        return float(SHRINK_SECONDS)


def cap_shrinking(seconds: float | None = None) -> bool:
    """Cap Hypothesis' shrinking time per test; whether the cap is in force."""
    if seconds is None:
        seconds = shrink_seconds()
    try:
        from hypothesis.internal.conjecture import engine
    except ImportError:  # pragma: no cover - Hypothesis reorganised
        return False
    if not hasattr(engine, "MAX_SHRINKING_SECONDS"):
        return False
    engine.MAX_SHRINKING_SECONDS = seconds  # type: ignore[assignment]
    return True


def on_shrink(listener: Callable[[], None]) -> None:
    """Call *listener* whenever Hypothesis starts shrinking a failing example.

    Whether the engine is already patched is read from the engine's class itself, not a
    flag of this module: a Hypothesis imported anew (its modules dropped from
    ``sys.modules`` by an earlier test or tool) has an unpatched class again."""
    _listeners.append(listener)
    try:
        from hypothesis.internal.conjecture.engine import ConjectureRunner
    except ImportError:  # pragma: no cover - Hypothesis reorganised
        return
    # Hypothesis renamed the step and its state (6.16x: *_test_cases for *_examples)
    found = next(((m, st) for m, st in _SHRINK_NAMES if hasattr(ConjectureRunner, m)), None)
    if found is None:
        return
    method, state = found
    original = getattr(ConjectureRunner, method)
    if getattr(original, "__dsh_announces__", False):
        return

    def announced(self: Any) -> None:
        from hypothesis import Phase

        if not getattr(self, state, None) or Phase.shrink not in self.settings.phases:
            original(self)  # nothing failed, or shrinking is off: nothing to announce
            return
        for listener in list(_listeners):
            with contextlib.suppress(Exception):  # a display must never break a run
                listener()
        original(self)

    announced.__dsh_announces__ = True  # type: ignore[attr-defined]
    setattr(ConjectureRunner, method, announced)


def forget(listener: Callable[[], None]) -> None:
    """Stop calling *listener* (the run that registered it ended)."""
    if listener in _listeners:
        _listeners.remove(listener)
