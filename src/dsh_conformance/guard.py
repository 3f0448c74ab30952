"""Fault isolation between tests: one adapter fault costs one test, quickly.

A Hypothesis test that hits a hang would otherwise retry and shrink against a dead
implementation, paying the timeout each time.  After the first timeout in a test, every
later call of the same test fails at once with the same fault; the next test starts
clean (and the transport restarts the process).

A crash (or garbage, or a protocol violation) is different: it costs a restart, not a
timeout, and it usually depends on the input.  So it reaches the test as an ordinary
failure that Hypothesis can replay and shrink, the transport restarting the process for
the next example (D-180) -- as long as the implementation answers other inputs: a crash
in a test that has had no call answered poisons the test like a timeout, so an
implementation that always crashes costs what it did before.  The restarts of a test
after its first crash are not charged to the transport's restart budget, up to
``SHRINK_RESTARTS`` per test; then the test is poisoned.  The request in flight at
the last fault is kept (``fault_request``) for the record and the reports.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_conformance.adapters.contract import (
    Adapter,
    AdapterFault,
    Handshake,
    ImplementationError,
    call_each,
)
from dsh_conformance.adapters.pending import Deferred, send_many

#: Restarts per test that shrinking a crash may take without charge to the budget.
SHRINK_RESTARTS: Final = 25
_BUDGET: Final = "restart_budget"  # the transport's attribute (adapters/subprocess.py)
#: The attribute holding the request in flight on the fault it caused.
REQUEST_ATTR: Final = "dsh_request"
#: Longest JSON of a request's arguments kept whole in ``fault_request``.
REQUEST_LIMIT: Final = 64 * 1024


def in_flight(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """The request(s) in flight at a fault, for the record: ``{op, args}`` for one call,
    ``{batch: [...]}`` for a pipelined batch; arguments too long to keep are previewed."""
    from dsh_conformance.reporting.escape import json_text

    def one(op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        try:
            text = json_text(dict(args))
        except (TypeError, ValueError):
            return {"op": op, "args_preview": repr(args)[:4096]}
        if len(text) > REQUEST_LIMIT:
            return {"op": op, "args_preview": text[:4096], "args_chars": len(text)}
        return {"op": op, "args": dict(args)}

    if len(calls) == 1:
        return one(*calls[0])
    return {"batch": [one(op, args) for op, args in calls[:20]], "calls": len(calls)}


class FaultGuard:
    """Wrap an adapter; remember the first poisoning fault of the current test."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.fault: AdapterFault | None = None
        self.calls = 0
        #: The request(s) in flight at the latest fault of this test (``in_flight``).
        self.fault_request: dict[str, Any] | None = None
        self._answered = False
        self._crashes = 0

    def begin_test(self) -> None:
        self.fault = None
        self.fault_request = None
        self._answered = False
        self._crashes = 0

    def _faulted(self, exc: AdapterFault, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> bool:
        """Note *exc*; whether it poisons the rest of the test (else it is replayable)."""
        self.fault_request = in_flight(calls)
        # The request travels with its fault: a report that names this fault names its
        # request, not a later fault's (issue 38).
        setattr(exc, REQUEST_ATTR, self.fault_request)
        replayable = exc.kind != "timeout" and self._answered and self._crashes < SHRINK_RESTARTS
        if replayable:
            budget = getattr(self.adapter, _BUDGET, None)
            if self._crashes and isinstance(budget, int):  # the test's first crash is charged
                setattr(self.adapter, _BUDGET, budget + 1)
            self._crashes += 1
        return not replayable

    def handshake(self) -> Handshake:
        return self.adapter.handshake()

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if self.fault is not None:
            raise AdapterFault(self.fault.kind, self.fault.message, self.fault.code)
        self.calls += 1
        try:
            result = self.adapter.call(op, args)
        except ImplementationError:
            self._answered = True
            raise
        except AdapterFault as exc:
            if self._faulted(exc, [(op, args)]):
                self.fault = exc
            raise
        self._answered = True
        return result

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        return self.send_many(calls).results()

    def send_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Deferred:
        """*calls* sent now, read later (adapters/pending.py): a fault is noted when it
        surfaces, at the send or at the read, as ``call_many``'s is."""
        if not hasattr(self.adapter, "send_many") and not hasattr(self.adapter, "call_many"):
            return Deferred.answered(call_each(self.call, calls))
        if self.fault is not None:
            raise AdapterFault(self.fault.kind, self.fault.message, self.fault.code)
        self.calls += len(calls)
        try:
            pending = send_many(self.adapter, calls)
        except AdapterFault as exc:
            self._fault_of(exc, calls)
            raise

        def read() -> list[Any]:
            try:
                result = pending.results()
            except AdapterFault as exc:
                self._fault_of(exc, calls)
                raise
            self._answered = True
            return result

        return Deferred(read)

    def _fault_of(self, exc: AdapterFault, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
        if self._faulted(exc, calls):
            self.fault = exc

    def close(self) -> None:
        self.adapter.close()
