"""Whether a conformance test is a fixed example (D-401): it judges inputs chosen in
advance, so its verdict cannot depend on the Hypothesis seed or profile (D-400).

A plain or parametrized test is one (a static case, a fixed scenario program); a
Hypothesis property is one when it has an explicit ``@example``, which Hypothesis runs
before it generates anything; a test that runs a state machine is not, its steps being
generated.  Whether the fixed examples break the way the kits break a sentence is the
kill matrix's to prove (tests/test_fixed_examples.py), not this static reading's.
"""

from __future__ import annotations

from typing import Any, Final

#: A call that generates a test's steps, whatever the test's own signature.
GENERATORS: Final = frozenset({"run_state_machine_as_test"})


def _calls_a_generator(function: Any) -> bool:
    code = getattr(function, "__code__", None)
    return code is not None and not GENERATORS.isdisjoint(code.co_names)


def explicit_examples(function: Any) -> int:
    """How many ``@example``s a Hypothesis test has, put above or below its ``@given``."""
    inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
    found = [
        *getattr(function, "hypothesis_explicit_examples", ()),
        *getattr(inner, "hypothesis_explicit_examples", ()),
    ]
    return len({id(e) for e in found})


def is_fixed(function: Any) -> bool:
    """Whether the test *function* is a fixed example."""
    if hasattr(function, "_hypothesis_state_machine_class"):  # a RuleBasedStateMachine.TestCase
        return False
    if getattr(function, "is_hypothesis_test", False):
        return explicit_examples(function) > 0
    return not _calls_a_generator(function)
