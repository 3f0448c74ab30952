"""Where a failing test goes in a report's failure list (D-179)."""

from __future__ import annotations

from collections.abc import Sequence

from dsh_conformance.record import TestResult
from dsh_conformance.reporting.verdict import Verdict


def gate_rank(test: TestResult, seed: Verdict, profile: Verdict) -> tuple[int, str]:
    """Where a failing test goes in a report's failure list (D-179): a broken adapter
    first, then failures of the seed verdict's MUSTs, of the profile verdict, of a note's
    SHOULD/MAY, then the rest; and a word for each."""
    blamed = set(test.blame or test.requirements)
    if test.broke:
        return 0, "adapter broke"
    if blamed & set(seed.failing):
        return 1, "seed MUST"
    if blamed & set(profile.failing):
        return 2, "profile"
    if blamed & set(seed.warnings):
        return 3, "seed SHOULD/MAY"
    return 4, "other"


def gate_ordered(
    seed: Verdict, profile: Verdict, tests: Sequence[TestResult]
) -> list[tuple[str, TestResult]]:
    """*tests* in gate order (``gate_rank``), each with its rank's word."""
    ranked = sorted(
        ((gate_rank(t, seed, profile), i, t) for i, t in enumerate(tests)),
        key=lambda item: (item[0][0], item[1]),
    )
    return [(rank[1], test) for rank, _, test in ranked]
