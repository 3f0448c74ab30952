"""The lockstep machines' batches (conformance/read_ahead.py ``act_then_read``): a rule's
last operation shares one round trip with the reads that follow it (issue 44 item 3).

Catches: a machine that sends a read before the operation it should observe (the read
would see the old state), puts an operation anywhere but first in a batch, or asks a read
twice between two operations (a prefetch that a later read of the rule does not use).
Keeps: any order of the reads within a batch (none changes state).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import call_each
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.inbox_machine import InboxMachine

READS = frozenset(
    {
        "agent.log",
        "agent.requests",
        "agent.notifications",
        "agent.state",
        "agent.submissions",
        "agent.system",
    }
)


class _Recording(ReferenceAdapter):
    """The reference model, keeping every batch of requests it was asked."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[tuple[str, str]]] = []

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        self.batches.append([(op, str(args.get("agent", "")))])
        return super().call(op, args)

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        self.batches.append([(op, str(args.get("agent", ""))) for op, args in calls])
        return call_each(super().call, calls)


def run_lockstep(machine: Callable[[], RuleBasedStateMachine], max_examples: int) -> None:
    """Run *machine* on the same programs every time (derandomized, no database), so a
    test can read what the hosts were asked in a fixed order."""
    run_state_machine_as_test(  # type: ignore[no-untyped-call]
        machine,
        settings=settings(
            max_examples=max_examples,
            stateful_step_count=12,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        ),
    )


def test_an_operation_leads_its_batch_and_no_read_is_asked_twice_between_operations() -> None:
    host = _Recording()
    impl = Implementation(host, validate=False)
    oracle = Implementation(ReferenceAdapter(), validate=False)
    run_lockstep(lambda: InboxMachine(impl, oracle), max_examples=8)
    asked: set[tuple[str, str]] = set()
    shared = 0
    for batch in host.batches:
        for index, (op, agent) in enumerate(batch):
            if op not in READS:
                assert index == 0, f"{op} is not first in its batch: {batch}"
                asked.clear()
                continue
            assert (op, agent) not in asked, f"{op} of {agent} asked twice: {batch}"
            asked.add((op, agent))
        shared += len(batch) > 1 and batch[0][0] not in READS
    assert shared, "no operation shared a batch with its reads"
