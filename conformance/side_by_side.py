"""One operation asked of the implementation and of the oracle, the two at work at once.

A differential test compares impl's result of an operation with the reference model's
(the in-process oracle).  Asked one after the other, the oracle waits for the host's
round trip and the host for nothing.  ``both`` sends impl's request first
(``Implementation.send_many``, D-507), computes the oracle's answer while the host
computes its own, then reads impl's (D-537).  The host receives the same request as
from ``impl.call``, and what the test sees is the same: impl's result checked as ever,
and impl's error raised before any error of the oracle's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.client import Implementation, ImplementationError

__all__ = ["both"]


def both(
    impl: Implementation, oracle: Implementation, op: str, args: Mapping[str, Any]
) -> tuple[Any, Any]:
    """``(impl.call(op, **args), oracle.call(op, **args))``, computed side by side."""
    sent = impl.send_many([(op, args)])
    try:
        want = oracle.call(op, **args)
    except Exception:
        _answer(sent.results()[0])  # impl's own error first, as when it was asked first
        raise
    return _answer(sent.results()[0]), want


def _answer(got: Any) -> Any:
    if isinstance(got, ImplementationError):
        raise got
    return got
