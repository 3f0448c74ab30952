"""Static cases: the language-neutral case set, each case tagged with requirement ids.

Every ``conformance/cases/*.json`` file with ``"format": "dsh-cases/1"`` validates against
``spec/schemas/cases.json`` and holds cases of two shapes (docs/cases.md):

- one call ``{id, description, provenance, req, op, args, expect: {result} | {error: CODE}}``;
- a sequence ``{id, description, provenance, req, steps: [{op, args, expect?}]}`` run in
  order on one implementation, where every step must succeed and steps with ``expect``
  are compared (agent ids are unique per case, so no reset is needed between cases).

A shrunk failure from a property or stateful test can be pasted in as a permanent case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import Handshake, ImplementationError
from dsh_conformance.checks import check, expect_equal, fail_all
from dsh_conformance.conformance.casefiles import cases
from dsh_conformance.model.jsstr import canonical_value

FORMAT = "dsh-cases/1"


def _op_capabilities() -> dict[str, str]:
    from dsh_conformance.adapters.reference import REGISTRY, ReferenceAdapter

    ReferenceAdapter()  # loads every op module
    return {name: entry.capability for name, entry in REGISTRY.items()}


def case_capabilities(case: dict[str, Any], capabilities: dict[str, str]) -> list[str]:
    """Every capability the case's operations need, in first-use order."""
    if case.get("capability"):
        return [case["capability"]]
    ops = [step["op"] for step in case["steps"]] if "steps" in case else [case["op"]]
    return list(dict.fromkeys(capabilities.get(op, "uri") for op in ops))


def load_cases() -> list[Any]:
    capabilities = _op_capabilities()
    return [
        pytest.param(
            case,
            id=f"{stem}:{case['id']}",
            marks=[
                pytest.mark.req("REF-010", *case["req"]),
                *(pytest.mark.capability(c) for c in case_capabilities(case, capabilities)),
            ],
        )
        for stem, case in cases(FORMAT)
    ]


def _check(
    impl: Implementation, op: str, raw_args: Any, expect: Any, where: str, cited: Sequence[str]
) -> None:
    """Judge one call of a case.  Whether it succeeds or fails is what the case's cited
    requirements say of it, so a call on the wrong side blames them (D-252); the exact
    result or error code is the reference's bytes (REF-010)."""
    args = canonical_value(raw_args)
    assert isinstance(args, dict), "case args must be an object"
    try:
        actual = impl.call(op, **args)
    except ImplementationError as exc:
        if expect is None or "error" not in expect:
            _soft(
                fail_all(
                    cited,
                    f"{op} failed where the case succeeds",
                    case=where,
                    op=op,
                    args=args,
                    error=exc.code,
                    error_message=exc.message,
                )
            )
            return
        expect_equal("REF-010", exc.code, expect["error"], "error code", case=where, op=op)
        return
    if expect is None:
        return
    if "error" in expect:
        _soft(
            fail_all(
                cited,
                f"{op} succeeded where the case fails",
                case=where,
                op=op,
                args=args,
                expected=expect["error"],
                returned=actual,
            )
        )
        return
    expect_equal(
        "REF-010",
        actual,
        _as_answered(actual, canonical_value(expect["result"])),
        case=where,
        op=op,
    )


#: Result fields a host of an older protocol may leave out (D-520): the recorded result is
#: compared without them when the host's result has none.
OPTIONAL_TYPED = ("sources", "source", "framingBytes")


def _as_answered(actual: Any, expected: Any) -> Any:
    """*expected* without the optional typed fields *actual* leaves out (D-520)."""
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        return expected
    return {k: v for k, v in expected.items() if k not in OPTIONAL_TYPED or k in actual}


def _soft(failure: Exception) -> None:
    """Record *failure* with the open collector (every case step is judged, D-250)."""
    with check("REF-010"):  # the failure already blames its ids; check() only collects it
        raise failure


@pytest.mark.parametrize("case", load_cases())
def test_case(impl: Implementation, case: dict[str, Any]) -> None:
    """A vector's exact bytes are identity (REF-010, D-163); whether each call succeeds or
    fails is what the case's cited requirements say, and a call on the wrong side blames
    them (D-252)."""
    where = f"{case['id']}: {case.get('note') or case['description']}"
    cited = case.get("decides", case["req"]) or ["REF-010"]
    if "steps" not in case:
        _check(impl, case["op"], case["args"], case["expect"], where, cited)
        return
    # The steps are sent together (pipelined, as the protocol allows), then judged in
    # order: an implementation that answers out of order fails here (issue 23 item 7).
    steps = case["steps"]
    calls: list[tuple[str, Mapping[str, Any]]] = []
    for step in steps:
        args = canonical_value(step["args"])
        assert isinstance(args, dict), "case args must be an object"
        calls.append((step["op"], args))
    outcomes = impl.call_many(calls)
    answered = Implementation(_Answered(outcomes, impl.handshake), impl.name)
    for number, step in enumerate(steps, 1):
        step_where = f"{where} (step {number})"
        _check(answered, step["op"], step["args"], step.get("expect"), step_where, cited)


class _Answered:
    """An adapter that hands out the replies of a pipelined batch in order, as the calls
    would have returned them (a typed error raised), so each step is judged exactly as a
    lone call is."""

    def __init__(self, outcomes: list[Any], handshake: Handshake) -> None:
        self._outcomes = iter(outcomes)
        self._handshake = handshake

    def handshake(self) -> Handshake:
        return self._handshake

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        outcome = next(self._outcomes)
        if isinstance(outcome, ImplementationError):
            raise outcome
        return outcome

    def close(self) -> None:
        pass
