"""The lockstep machines send impl's batch first and read it after the reference's step
(D-507): the host computes while the harness does, and receives what it did before.

A recording host (the reference model behind ``send_many``) logs each batch when it is
sent and when it is read, in one log with the oracle's calls.  Catches: a machine whose
requests change when the host answers at read time instead of at send time (a read
asked before the step it should see, a request lost or added), a call that overtakes a
pending batch (sent before the batch is read), and a machine that waits for impl before
computing the reference's step (no oracle call between an operation's send and read) or
its reads of the same agents (the invariants' comparisons).
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis.stateful import RuleBasedStateMachine

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import call_each
from dsh_conformance.adapters.pending import Deferred
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance import inbox_machine
from dsh_conformance.conformance.inbox_machine import InboxMachine
from dsh_conformance.conformance.test_side_stateful import SideMachine

sys.path.insert(0, str(Path(__file__).parent))
from test_lockstep_batches import run_lockstep

READS = frozenset({"agent.log", "agent.requests", "agent.notifications", "agent.state"})
READS |= {"agent.submissions", "agent.system"}

Log = list[tuple[str, Any]]
Machine = Callable[[Implementation, Implementation], RuleBasedStateMachine]


class _Host(ReferenceAdapter):
    """The reference model answering each batch at send time, or (*later*) at read time
    as the subprocess transport does; every request logged as it is sent."""

    def __init__(self, log: Log, later: bool) -> None:
        super().__init__()
        self.log = log
        self.later = later

    def _answer(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        self.log.append(("read", len(calls)))
        return call_each(lambda op, args: ReferenceAdapter.call(self, op, args), calls)

    def send_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Deferred:
        sent = [json.dumps([op, args], sort_keys=True, default=repr) for op, args in calls]
        self.log.append(("send", sent))
        if not self.later:
            return Deferred.answered(self._answer(calls))
        return Deferred(lambda: self._answer(calls))

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        (answer,) = self.send_many([(op, args)]).results()
        if isinstance(answer, Exception):
            raise answer
        return answer


class _Oracle(ReferenceAdapter):
    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        self.log.append(("oracle", op))
        return super().call(op, args)


def _run(machine: Machine, later: bool) -> Log:
    log: Log = []
    impl = Implementation(_Host(log, later), validate=False)
    oracle = Implementation(_Oracle(log), validate=False)
    run_lockstep(lambda: machine(impl, oracle), max_examples=6)
    return log


MACHINES: dict[str, Machine] = {
    "ownership": lambda impl, oracle: InboxMachine(impl, oracle, prefix=False),
    "placement": lambda impl, oracle: InboxMachine(impl, oracle, prefix=True),
    "side": SideMachine,
}


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_the_host_receives_the_same_requests_and_works_while_the_oracle_does(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = []
    for answer_later in (False, True):  # each run names its agents from 1 again
        monkeypatch.setattr(inbox_machine, "_machine_ids", itertools.count(1))
        runs.append(_run(MACHINES[name], later=answer_later))
    now, later = runs
    sent = [entry for entry in later if entry[0] == "send"]
    assert sent == [entry for entry in now if entry[0] == "send"]
    overlapped = 0
    for index, (kind, requests) in enumerate(later):
        if kind != "send":
            continue
        read = next(i for i in range(index + 1, len(later)) if later[i][0] != "oracle")
        assert later[read] == ("read", len(requests)), f"a call overtook {requests[:1]}"
        op = json.loads(requests[0])[0]
        oracle = {entry[1] for entry in later[index + 1 : read]}
        asked = {json.loads(request)[0] for request in requests[1:]}
        if op not in READS and op != "reset":
            assert op in oracle, f"{op} was read before the reference took its step"
            assert asked <= oracle, f"{op}: the reference's reads were not taken meanwhile"
            overlapped += 1
    assert overlapped > 20
