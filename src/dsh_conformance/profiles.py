"""The suite's Hypothesis profiles, loadable by name in every run.

Apart from the pytest plugin so the runner can register them without importing the
plugin (and the harness behind it).
"""

from __future__ import annotations

from typing import Any

#: Hypothesis profiles: ``quick`` for parity and smoke-level runs (few examples, the same
#: ones every time), ``dev`` is fast, ``ci`` derandomized with more examples.
PROFILES: dict[str, dict[str, Any]] = {
    "quick": {"max_examples": 10, "deadline": None, "derandomize": True, "database": None},
    "dev": {"max_examples": 60, "deadline": None},
    "ci": {"max_examples": 200, "deadline": None, "derandomize": True, "print_blob": True},
    "thorough": {"max_examples": 2000, "deadline": None},
}


def register_profiles(max_examples: int | None = None) -> None:
    """Make the suite's Hypothesis profiles loadable by name; *max_examples* (the CLI's
    ``--max-examples``) overrides every profile's.  No profile runs Hypothesis' explain
    phase (D-312): it costs time after shrinking, and its notes are Python, which no
    report shows."""
    from hypothesis import Phase, settings

    phases = tuple(p for p in Phase if p is not Phase.explain)
    for name, values in PROFILES.items():
        extra = {"max_examples": max_examples} if max_examples else {}
        settings.register_profile(name, **{"phases": phases, **values, **extra})
