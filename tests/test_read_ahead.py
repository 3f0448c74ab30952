"""read_ahead and act_then_read (conformance/read_ahead.py): a lockstep invariant's reads in
one batch, and a rule's last operation in the same batch as the reads that follow it.

Catches: a read-ahead that asks one request per read (no batch), re-asks what the machine
has already read since the last operation, caches an error as if it were an answer (the
machine would compare an exception), or pairs an answer with the wrong read; an
act_then_read that keeps a read from before the operation, sends the reads before the
operation, or reports the operation's error as a result.  Keeps: a
host that answers one of the reads with an error (that read is asked again, and raises).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.client import Implementation, ImplementationError
from dsh_conformance.adapters.contract import call_each
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.read_ahead import act_then_read, read_ahead


class _Counting(ReferenceAdapter):
    """The reference model, counting batches; ``agent.state`` of agent "b" is an error."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "agent.state" and args.get("agent") == "b":
            raise ImplementationError("DSH_INVALID_ARGUMENT", "no such agent")
        if op == "agent.fail":
            raise ImplementationError("DSH_AGENT_DISPOSED", "disposed")
        return {"op": op, "agent": args.get("agent")}

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        self.batches.append([op for op, _ in calls])
        return call_each(self.call, calls)


def test_missing_reads_go_in_one_batch_and_errors_are_left_to_the_machine() -> None:
    adapter = _Counting()
    impl = Implementation(adapter, validate=False)
    seen: dict[tuple[str, str], Any] = {("agent.log", "a"): "already read"}
    reads = [((op, aid), op, aid) for aid in ("a", "b") for op in ("agent.log", "agent.state")]
    read_ahead(impl, seen, reads)()
    assert adapter.batches == [["agent.state", "agent.log", "agent.state"]]
    assert seen == {
        ("agent.log", "a"): "already read",
        ("agent.state", "a"): {"op": "agent.state", "agent": "a"},
        ("agent.log", "b"): {"op": "agent.log", "agent": "b"},
    }


def test_one_missing_read_is_left_to_the_machine() -> None:
    adapter = _Counting()
    seen: dict[str, Any] = {"agent.log": 1}
    read_ahead(Implementation(adapter, validate=False), seen, [("agent.log", "agent.log", "a")])()
    read_ahead(
        Implementation(adapter, validate=False), seen, [("agent.state", "agent.state", "a")]
    )()
    assert adapter.batches == []
    assert seen == {"agent.log": 1}


def test_an_operation_and_the_reads_after_it_go_in_one_batch_operation_first() -> None:
    adapter = _Counting()
    impl = Implementation(adapter, validate=False)
    seen: dict[tuple[str, str], Any] = {("agent.log", "a"): "before the step"}
    reads = [((op, aid), op, aid) for aid in ("a", "b") for op in ("agent.log", "agent.state")]
    outcome = act_then_read(impl, seen, "agent.step", {"agent": "a"}, reads)()
    assert outcome == ("ok", {"op": "agent.step", "agent": "a"})
    assert adapter.batches == [
        ["agent.step", "agent.log", "agent.state", "agent.log", "agent.state"]
    ]
    assert seen == {  # the read from before the step is gone; b's error is left out
        ("agent.log", "a"): {"op": "agent.log", "agent": "a"},
        ("agent.state", "a"): {"op": "agent.state", "agent": "a"},
        ("agent.log", "b"): {"op": "agent.log", "agent": "b"},
    }


def test_an_operation_that_fails_is_its_error_code() -> None:
    seen: dict[str, Any] = {}
    impl = Implementation(_Counting(), validate=False)
    outcome = act_then_read(
        impl, seen, "agent.fail", {"agent": "a"}, [("agent.log", "agent.log", "a")]
    )()
    assert outcome == ("error", "DSH_AGENT_DISPOSED")
    assert seen == {"agent.log": {"op": "agent.log", "agent": "a"}}
