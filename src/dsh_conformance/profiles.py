"""The suite's Hypothesis profiles, loadable by name in every run.

Apart from the pytest plugin so the runner can register them without importing the
plugin (and the harness behind it).
"""

from __future__ import annotations

from typing import Any, Final

#: Hypothesis profiles: ``quick`` for parity and smoke-level runs (few examples, the same
#: ones every time), ``dev`` is fast, ``ci`` derandomized with more examples; ``fixed``
#: runs only the explicit examples (``@example``; plain tests run as always), the proof
#: that every seed MUST is judged without generation (D-400).
PROFILES: dict[str, dict[str, Any]] = {
    "fixed": {"max_examples": 1, "deadline": None, "derandomize": True, "database": None},
    "quick": {"max_examples": 10, "deadline": None, "derandomize": True, "database": None},
    "dev": {"max_examples": 60, "deadline": None},
    "ci": {"max_examples": 200, "deadline": None, "derandomize": True, "print_blob": True},
    "thorough": {"max_examples": 2000, "deadline": None},
}
#: Profiles without generation: a property test without ``@example`` is skipped under them.
EXPLICIT_ONLY: Final = frozenset({"fixed"})
#: The profile a property's own count is written for: the committed reports' (D-492).
COUNTS_AT: Final = "ci"


def examples(at_ci: int) -> int:
    """A property's examples under the loaded profile, for one that runs *at_ci* under
    ``ci`` (D-492): scaled by the profile's ``max_examples`` (``--max-examples`` when
    given) over ci's, rounded up, so ``ci`` keeps every count the reports were made with
    and ``quick``, ``dev``, ``thorough`` and ``--max-examples`` reach the property too.
    Read at import, which a change of profile repeats (D-512)."""
    from hypothesis import settings

    base = settings().max_examples  # the loaded profile's
    at: int = PROFILES[COUNTS_AT]["max_examples"]
    return max(1, -(-at_ci * base // at))


def register_profiles(max_examples: int | None = None) -> None:
    """Make the suite's Hypothesis profiles loadable by name; *max_examples* (the CLI's
    ``--max-examples``) overrides every profile's.  No profile runs Hypothesis' explain
    phase (D-312): it costs time after shrinking, and its notes are Python, which no
    report shows."""
    from hypothesis import Phase, settings

    phases = tuple(p for p in Phase if p is not Phase.explain)
    for name, values in PROFILES.items():
        extra = {"max_examples": max_examples} if max_examples else {}
        chosen = (Phase.explicit,) if name in EXPLICIT_ONLY else phases
        settings.register_profile(name, **{"phases": chosen, **values, **extra})
