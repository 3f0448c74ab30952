"""A batch sent now whose answers are read later: the caller works while the host does.

The lockstep machines send the implementation's step first, compute the reference's
step while the host computes its own, then read (issue 44 item 3).  ``send_many`` of
each layer (``Implementation``, ``FaultGuard``, the subprocess transport) writes a batch
and returns a ``Deferred``; ``results()`` reads its answers, the same list ``call_many``
returns, raising what ``call_many`` raises.  ``call_many`` is ``send_many`` read at once.

At most one batch is outstanding per layer: any other call first reads the one pending
(``settle``), keeping its answers or its fault for its own ``results()``, so requests
and replies are never interleaved.  An adapter without a ``send_many`` of its own (the
in-process ones) computes the batch at send time (``send_many`` below, D-507).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.contract import Adapter, call_each

__all__ = ["Deferred", "send_many"]

Calls = Sequence[tuple[str, Mapping[str, Any]]]


class Deferred:
    """A batch's answers, read once on first need: by ``results()``, or by ``wait()``
    when another call needs the wire first."""

    __slots__ = ("_answers", "_error", "_read")

    def __init__(
        self, read: Callable[[], list[Any]] | None, answers: list[Any] | None = None
    ) -> None:
        self._read = read
        self._answers: list[Any] = [] if answers is None else answers
        self._error: BaseException | None = None

    @classmethod
    def answered(cls, answers: list[Any]) -> Deferred:
        """A batch already answered (computed at send time)."""
        return cls(None, answers)

    @property
    def done(self) -> bool:
        return self._read is None

    def wait(self) -> None:
        """Read the answers now if not yet read, keeping them or the exception the
        reading raised for ``results()``; never raises an ``Exception`` itself."""
        read, self._read = self._read, None
        if read is None:
            return
        try:
            self._answers = read()
        except BaseException as exc:  # kept for results(); an interrupt goes on up
            self._error = exc
            if not isinstance(exc, Exception):
                raise

    def fail(self, error: Exception) -> None:
        """Answer *error* instead, unless the answers were read already (the adapter
        closed with the batch pending)."""
        if self._read is not None:
            self._read, self._error = None, error

    def results(self) -> list[Any]:
        """The answers (each a result or its ``ImplementationError``), or the fault."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._answers


def send_many(adapter: Adapter, calls: Calls) -> Deferred:
    """Send *calls* through *adapter*'s own ``send_many``, or answer them now: through
    its ``call_many`` or one by one (``call_each``), as ``Implementation.call_many`` did."""
    send = getattr(adapter, "send_many", None)
    if send is not None:
        pending: Deferred = send(calls)
        return pending
    many = getattr(adapter, "call_many", None)
    if many is not None:
        return Deferred.answered(list(many(calls)))
    return Deferred.answered(call_each(adapter.call, calls))
