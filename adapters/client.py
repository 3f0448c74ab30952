"""What a conformance test holds: an implementation behind the adapter contract."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.contract import (
    Adapter,
    Handshake,
    ImplementationError,
    UnreadableResult,
)
from dsh_conformance.adapters.pending import Deferred, send_many

__all__ = ["Implementation", "ImplementationError", "UnreadableResult"]


class Implementation:
    """A handshaken adapter with a convenient ``call(op, **args)``.

    Every result ``call`` returns matches its op's published schema (``validate``, on by
    default): a check reads it for its meaning, and a result the schema does not allow
    raises ``UnreadableResult`` (a protocol problem, blamed on no requirement) instead
    of a ``KeyError`` deep inside a check (issue 36).
    """

    def __init__(self, adapter: Adapter, name: str = "", *, validate: bool = True) -> None:
        self.adapter = adapter
        self.name = name
        self.validate = validate
        self.handshake: Handshake = adapter.handshake()
        self._pending: Deferred | None = None

    @property
    def capabilities(self) -> frozenset[str]:
        return self.handshake.capabilities

    def supports(self, capability: str) -> bool:
        return capability in self.handshake.capabilities

    def call(self, op: str, /, **args: Any) -> Any:
        """Run *op*; raises ImplementationError (typed error), AdapterFault, or
        UnreadableResult when the result breaks the op's schema."""
        self.settle()
        result = self.adapter.call(op, args)
        return self._checked(op, args, result)

    def _checked(self, op: str, args: Mapping[str, Any], result: Any) -> Any:
        from dsh_conformance.unjudged import read_by_the_test

        read_by_the_test(op, result)  # where a reading error looks up a missing key (D-521)
        if not self.validate:
            return result
        from dsh_conformance.adapters.results import check_result

        return check_result(op, args, result)

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """Run *calls* in order, pipelined where the adapter can (every request sent
        before the first reply is read, as docs/protocol.md allows): each item is the
        result, or the ``ImplementationError`` the call answered with.  A fault raises
        ``AdapterFault`` for the whole batch."""
        return self.send_many(calls).results()

    def send_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Deferred:
        """Send *calls* now, read their answers later (adapters/pending.py, D-507): the
        ``results()`` of what it returns are what ``call_many`` returns or raises, checked
        alike.  The host receives the same requests in the same order; the caller works
        while the host does.  One batch is outstanding at a time: any other call first
        reads it (``settle``).  A fault while sending raises at once."""
        self.settle()
        copies = [(op, dict(args)) for op, args in calls]
        sent = send_many(self.adapter, copies)

        def read() -> list[Any]:
            return [
                got if isinstance(got, ImplementationError) else self._checked(op, args, got)
                for (op, args), got in zip(calls, sent.results(), strict=True)
            ]

        self._pending = Deferred(read)
        return self._pending

    def settle(self) -> None:
        """Read the batch ``send_many`` left pending, if any, keeping its answers (or its
        fault) for its own ``results()``: a call never overtakes a batch on the wire."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.wait()

    def error_code(self, op: str, /, **args: Any) -> str | None:
        """The error code *op* fails with, or None when it succeeds."""
        self.settle()
        try:
            self.adapter.call(op, args)
        except ImplementationError as exc:
            return exc.code
        return None

    def close(self) -> None:
        self.adapter.close()
