"""Fault isolation between tests: one adapter fault costs one test, quickly.

A Hypothesis test that hits a hang would otherwise retry and shrink against a dead
implementation, paying the timeout each time.  After the first ``AdapterFault`` in a
test, every later call of the same test fails at once with the same fault; the next
test starts clean (and the transport restarts the process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.contract import (
    Adapter,
    AdapterFault,
    Handshake,
    ImplementationError,
)


class FaultGuard:
    """Wrap an adapter; remember the first fault of the current test."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.fault: AdapterFault | None = None
        self.calls = 0

    def begin_test(self) -> None:
        self.fault = None

    def handshake(self) -> Handshake:
        return self.adapter.handshake()

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if self.fault is not None:
            raise AdapterFault(self.fault.kind, self.fault.message, self.fault.code)
        self.calls += 1
        try:
            return self.adapter.call(op, args)
        except AdapterFault as exc:
            self.fault = exc
            raise

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        many = getattr(self.adapter, "call_many", None)
        if many is None:
            out: list[Any] = []
            for op, args in calls:
                try:
                    out.append(self.call(op, args))
                except ImplementationError as exc:
                    out.append(exc)
            return out
        if self.fault is not None:
            raise AdapterFault(self.fault.kind, self.fault.message, self.fault.code)
        try:
            result: list[Any] = many(calls)
        except AdapterFault as exc:
            self.fault = exc
            raise
        return result

    def close(self) -> None:
        self.adapter.close()
