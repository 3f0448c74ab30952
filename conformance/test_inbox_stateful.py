"""Stateful lockstep tests of inbox ownership (conformance/inbox_machine.py).

Two runs: one that never uses a prompt-prefix context (ownership, admission, steering and
drops, independent of placement) and one with every placement (the placement split).  A
failure prints the shrunk program as ``state.<rule>(...)`` calls; keep it as a permanent
case with ``python tools/add_inbox_regression.py`` (conformance/cases/inbox_regressions.json).
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.inbox_machine import BLAMES, InboxMachine
from dsh_conformance.profiles import examples

pytestmark = [pytest.mark.capability("agent"), pytest.mark.differential]

SETTINGS = settings(
    max_examples=examples(100),
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.req(
    "INBOX-001",
    "INBOX-002",
    "INBOX-003",
    "INBOX-004",
    "INBOX-005",
    "INBOX-011",
    "INBOX-012",
    "INBOX-020",
    "INBOX-021",
    "INBOX-031",
    "ENV-054",
    "ENV-056",
    "ENV-058",
    *BLAMES,
)
def test_inbox_ownership_state_machine(impl: Implementation, oracle: Implementation) -> None:
    run_state_machine_as_test(  # type: ignore[no-untyped-call, unused-ignore]
        cast(Any, lambda: InboxMachine(impl, oracle, prefix=False)), settings=SETTINGS
    )


@pytest.mark.req("ENV-050", "ENV-053", "ENV-055", "ENV-059", "ENV-060", "ENV-062", *BLAMES)
def test_inbox_placement_state_machine(impl: Implementation, oracle: Implementation) -> None:
    run_state_machine_as_test(  # type: ignore[no-untyped-call, unused-ignore]
        cast(Any, lambda: InboxMachine(impl, oracle, prefix=True)), settings=SETTINGS
    )
