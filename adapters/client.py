"""What a conformance test holds: an implementation behind the adapter contract."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.contract import Adapter, Handshake, ImplementationError

__all__ = ["Implementation", "ImplementationError"]


class Implementation:
    """A handshaken adapter with a convenient ``call(op, **args)``."""

    def __init__(self, adapter: Adapter, name: str = "") -> None:
        self.adapter = adapter
        self.name = name
        self.handshake: Handshake = adapter.handshake()

    @property
    def capabilities(self) -> frozenset[str]:
        return self.handshake.capabilities

    def supports(self, capability: str) -> bool:
        return capability in self.handshake.capabilities

    def call(self, op: str, /, **args: Any) -> Any:
        """Run *op*; raises ImplementationError (typed error) or AdapterFault."""
        return self.adapter.call(op, args)

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """Run *calls* in order, pipelined where the adapter can (every request sent
        before the first reply is read, as docs/protocol.md allows): each item is the
        result, or the ``ImplementationError`` the call answered with.  A fault raises
        ``AdapterFault`` for the whole batch."""
        many = getattr(self.adapter, "call_many", None)
        if many is not None:
            return list(many([(op, dict(args)) for op, args in calls]))
        out: list[Any] = []
        for op, args in calls:
            try:
                out.append(self.adapter.call(op, dict(args)))
            except ImplementationError as exc:
                out.append(exc)
        return out

    def error_code(self, op: str, /, **args: Any) -> str | None:
        """The error code *op* fails with, or None when it succeeds."""
        try:
            self.adapter.call(op, args)
        except ImplementationError as exc:
            return exc.code
        return None

    def close(self) -> None:
        self.adapter.close()
