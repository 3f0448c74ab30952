"""The reads a lockstep invariant is about to make, asked in one pipelined batch.

After every step the lockstep machines (inbox_machine.py, test_side_stateful.py) read
the same few read-only ops of each agent (``agent.log``, ``agent.state``, …) and keep
each answer until the next operation.  Asked one by one over the subprocess transport,
each read was a round trip of its own: most of a differential run's time (issue 44
item 3).  Asked together, the host answers them in order from one batch of requests, as
docs/protocol.md allows; what each read returns is the same, since none changes state.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, MutableMapping
from typing import Any, TypeVar

from dsh_conformance.adapters.client import Implementation, ImplementationError

__all__ = ["act_then_read", "read_ahead"]

K = TypeVar("K", bound=Hashable)


def read_ahead(
    impl: Implementation,
    seen: MutableMapping[K, Any],
    reads: Iterable[tuple[K, str, str]],
) -> None:
    """Put into *seen* impl's answer to each ``(key, op, agent)`` read it lacks, in one
    ``call_many``.  A read answered with an error is left out: the machine's own read asks
    it again and raises the error where it always did."""
    wanted = [(key, op, agent) for key, op, agent in reads if key not in seen]
    if len(wanted) < 2:
        return  # nothing to pipeline: the machine's own read asks it
    _keep(seen, wanted, impl.call_many([(op, {"agent": agent}) for _, op, agent in wanted]))


def act_then_read(
    impl: Implementation,
    seen: MutableMapping[K, Any],
    op: str,
    args: Mapping[str, Any],
    reads: Iterable[tuple[K, str, str]],
) -> tuple[str, Any]:
    """impl's outcome of the operation *op* (``("ok", result)`` or ``("error", code)``),
    asked in one batch with the reads the invariants make right after it.

    The host receives the same requests in the same order as when the operation and then
    the reads are asked one after the other (read_ahead): only the round trip between
    them goes.  *seen* is emptied (the operation may change every read) and refilled with
    the reads' answers; a read answered with an error is left out, as in ``read_ahead``."""
    seen.clear()
    wanted = list(reads)
    answers = impl.call_many([(op, args), *((o, {"agent": agent}) for _, o, agent in wanted)])
    _keep(seen, wanted, answers[1:])
    first = answers[0]
    if isinstance(first, ImplementationError):
        return "error", first.code
    return "ok", first


def _keep(
    seen: MutableMapping[K, Any], reads: list[tuple[K, str, str]], answers: list[Any]
) -> None:
    """Put each read's answer into *seen* under its key, unless it is an error (the
    machine's own read asks that one again and raises it where it always did)."""
    for (key, _, _), answer in zip(reads, answers, strict=True):
        if not isinstance(answer, ImplementationError):
            seen[key] = answer
