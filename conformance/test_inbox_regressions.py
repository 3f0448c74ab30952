"""Permanent inbox programs (conformance/cases/inbox_regressions.json, format dsh-agent-program/1).

Each case is a shrunk or hand-picked state-machine program; it replays against impl and
oracle in lockstep and checks every invariant of conformance/inbox_machine.py after each
step (D-75).  Lockstep differences blame REF-007; each invariant blames its own id.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import hard
from dsh_conformance.conformance.casefiles import cases
from dsh_conformance.conformance.inbox_machine import BLAMES, InboxMachine

FORMAT = "dsh-agent-program/1"
RULES = frozenset(
    {"configure", "send", "steer", "inject", "send_hostile", "cancel", "listen", "script"}
    | {"mutate_inputs", "send_and_run", "advance_to"}
    | {"step", "run", "dispose"}
)


def load_programs() -> list[Any]:
    return [
        pytest.param(
            case,
            id=f"{stem}:{case['id']}",
            marks=[
                pytest.mark.req(*dict.fromkeys([*case["req"], *BLAMES])),
                pytest.mark.capability("agent"),
                pytest.mark.differential,
            ],
        )
        for stem, case in cases(FORMAT)
    ]


def check(machine: InboxMachine) -> None:
    machine.implementations_agree()
    machine.seed_invariants()


@pytest.mark.parametrize("case", load_programs())
def test_program(impl: Implementation, oracle: Implementation, case: dict[str, Any]) -> None:
    machine = InboxMachine(impl, oracle, prefix=case.get("prefix", True))
    with hard():  # a program stops at its first failing step, as a state machine does
        check(machine)
        for number, step in enumerate(case["program"]):
            assert step["rule"] in RULES, f"unknown rule {step['rule']!r}"
            getattr(machine, step["rule"])(**step.get("args", {}))
            try:
                check(machine)
            except AssertionError as exc:
                raise AssertionError(f"after step {number} {step}: {exc}") from exc
        machine.teardown()  # type: ignore[no-untyped-call, unused-ignore]
