"""Send now, read later (adapters/pending.py, D-507): ``send_many`` through the whole
chain the suite uses (``Implementation`` → ``FaultGuard`` → ``SubprocessAdapter``).

Catches: a deferred read whose fault differs from ``call_many``'s for the same host (a
hang, a crash, a closed pipe, garbage, a reply to the wrong id: kind, code, wording, the
guard's poison and the request it keeps), a deadline that starts at the send (the time
the caller spends before reading would eat the host's), a call that overtakes a pending
batch on the wire (its reply read as the batch's), a fault of the pending batch lost when
another call reads it first, and a batch left pending at close that reads a dead pipe.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
from dsh_conformance.adapters.pending import Deferred
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.guard import FaultGuard

SERVE = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
CALLS = [("uri.encode", {"sessionId": s}) for s in ("a", "b", "c")]
ANSWERS = ["dsh-session:ImEi", "dsh-session:ImIi", "dsh-session:ImMi"]


def fake(*faults: str) -> list[str]:
    argv = [sys.executable, "-m", "dsh_conformance.adapters.fake"]
    for fault in faults:
        argv += ["--fault", fault]
    return argv


def chain(argv: list[str], timeout: float = 30.0) -> tuple[Implementation, FaultGuard]:
    guard = FaultGuard(SubprocessAdapter(argv, timeout=timeout))
    return Implementation(guard, validate=False), guard


def fault_of(call: Callable[[], Any]) -> AdapterFault:
    with pytest.raises(AdapterFault) as caught:
        call()
    return caught.value


def later(impl: Implementation, calls: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
    """``send_many``, the caller busy for a while, then the read: as the machines do."""
    sent = impl.send_many(calls)
    time.sleep(0.3)  # the reference's step; a crashing host has died by now
    return sent.results()


@pytest.mark.parametrize(
    "fault",
    ["hang@2", "crash@2", "stderr-silence@2", "garbage@2", "wrong-id@2", "endless=100@2"],
)
def test_a_fault_while_a_batch_is_pending_is_the_fault_call_many_raises(fault: str) -> None:
    """The same host, the same batch: the same typed fault, word for word, and the guard
    poisons (or not) and keeps the same request either way."""
    seen = []
    for ask in (Implementation.call_many, later):
        impl, guard = chain(fake(fault), timeout=1.0)
        try:
            guard.begin_test()
            assert impl.call("uri.encode", sessionId="first") == "dsh-session:ImZpcnN0Ig"
            exc = fault_of(lambda: ask(impl, CALLS))  # noqa: B023
            seen.append((exc.kind, exc.code, exc.message, guard.fault_request, guard.fault))
        finally:
            impl.close()
    (kind, code, message, request, poison), again = seen
    assert again[:4] == (kind, code, message, request)
    assert (again[4] is None) == (poison is None)
    assert kind == ("timeout" if fault.startswith("hang") else kind)


def test_the_deadline_starts_at_the_read(tmp_path: Path) -> None:
    """The per-call timeout is the host's from the moment the harness waits (D-507): a
    host that answers within it of the read is answered, although it took longer than
    the timeout from the send, the harness's own work in between not charged to it."""
    slow = tmp_path / "slow_host.py"
    slow.write_text(
        "import sys, time\n"
        "from dsh_conformance.adapters.serve import Server\n"
        "from dsh_conformance.adapters.reference import ReferenceAdapter\n"
        "class Slow(Server):\n"
        "    def dispatch(self, message):\n"
        "        if message.get('op') != 'handshake':\n"
        "            time.sleep(2.0)\n"
        "        return super().dispatch(message)\n"
        "sys.exit(Slow(ReferenceAdapter()).serve())\n"
    )
    impl, _ = chain([sys.executable, str(slow)], timeout=1.5)
    try:
        sent = impl.send_many(CALLS[:1])
        time.sleep(1.5)  # the harness's work: the host answers 0.5 s into the read
        assert sent.results() == ANSWERS[:1]
    finally:
        impl.close()


def test_a_call_while_a_batch_is_pending_reads_the_batch_first() -> None:
    impl, _ = chain(SERVE)
    try:
        sent = impl.send_many(CALLS)
        assert impl.call("uri.encode", sessionId="d") == "dsh-session:ImQi"
        assert impl.call_many([("uri.decode", {"uri": "nope"})])[0].code
        assert sent.results() == ANSWERS
        assert sent.results() == ANSWERS  # read once, kept
    finally:
        impl.close()


def test_each_layer_reads_a_pending_batch_before_its_next_exchange() -> None:
    """Below ``Implementation`` too: the transport never writes a request while a batch
    is unread, whoever calls it."""
    adapter = SubprocessAdapter(SERVE, timeout=30)
    try:
        first = adapter.send_many(CALLS[:2])
        second = adapter.send_many(CALLS[2:])
        assert adapter.call("uri.encode", {"sessionId": "d"}) == "dsh-session:ImQi"
        assert second.results() == ANSWERS[2:]
        assert first.results() == ANSWERS[:2]
    finally:
        adapter.close()


def test_the_fault_of_a_pending_batch_is_kept_for_it_when_another_call_reads_it() -> None:
    """A hang in the pending batch: the call that needed the pipe finds the guard
    poisoned (the timeout was noted in order), and the batch's own read raises it."""
    impl, guard = chain(fake("hang@1"), timeout=0.5)
    try:
        guard.begin_test()
        sent = impl.send_many(CALLS)
        poisoned = fault_of(lambda: impl.call("uri.encode", sessionId="d"))
        kept = fault_of(sent.results)
        assert kept.kind == poisoned.kind == "timeout"
        assert kept.message == poisoned.message
    finally:
        impl.close()


def test_a_typed_error_and_results_come_back_alike() -> None:
    impl, _ = chain(SERVE)
    try:
        out = impl.send_many([*CALLS, ("uri.decode", {"uri": "nope"})]).results()
        assert out[:3] == ANSWERS
        assert isinstance(out[3], ImplementationError)
    finally:
        impl.close()


def test_a_batch_pending_at_close_is_a_closed_adapter_fault_not_a_read_of_a_dead_pipe() -> None:
    adapter = SubprocessAdapter(SERVE, timeout=30)
    sent = adapter.send_many(CALLS)
    adapter.close()
    exc = fault_of(sent.results)
    assert exc.kind == "crash"
    assert "the adapter is closed" in exc.message


def test_an_in_process_adapter_answers_at_send_time() -> None:
    from dsh_conformance.adapters.reference import ReferenceAdapter

    asked: list[str] = []

    class Counting(ReferenceAdapter):
        def call(self, op: str, args: Any) -> Any:
            asked.append(op)
            return super().call(op, args)

    impl = Implementation(FaultGuard(Counting()), validate=True)
    sent = impl.send_many(CALLS)
    assert asked == ["uri.encode"] * 3
    assert sent.results() == ANSWERS


def test_deferred_keeps_what_the_read_raised_and_lets_an_interrupt_through() -> None:
    calls = []

    def boom() -> list[Any]:
        calls.append(1)
        raise AdapterFault("crash", "gone")

    pending = Deferred(boom)
    pending.wait()  # another call needed the pipe: nothing raised there
    with pytest.raises(AdapterFault):
        pending.results()
    with pytest.raises(AdapterFault):
        pending.results()
    assert calls == [1]

    def interrupted() -> list[Any]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Deferred(interrupted).wait()
