"""The reads a lockstep invariant is about to make, asked in one pipelined batch.

After every step the lockstep machines (inbox_machine.py, test_side_stateful.py) read
the same few read-only ops of each agent (``agent.log``, ``agent.state``, …) and keep
each answer until the next operation.  Asked one by one over the subprocess transport,
each read was a round trip of its own: most of a differential run's time (issue 44
item 3).  Asked together, the host answers them in order from one batch of requests, as
docs/protocol.md allows; what each read returns is the same, since none changes state.

Both send now and read later (``Implementation.send_many``, D-507): each returns a
function that reads impl's answers, which the machine calls once it has computed the
reference's side of the step, so the harness and the host compute at the same time.
The machine calls it before anything else asks impl (an earlier call would read the
batch first, keeping its answers, but *seen* would miss them).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, MutableMapping
from typing import Any, ParamSpec, TypeVar

from dsh_conformance.adapters.client import Implementation, ImplementationError

__all__ = ["act_then_read", "attempt", "read_ahead", "reference_reads"]

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")
P = ParamSpec("P")


def read_ahead(
    impl: Implementation,
    seen: MutableMapping[K, Any],
    reads: Iterable[tuple[K, str, str]],
) -> Callable[[], None]:
    """Ask impl, in one ``send_many``, each ``(key, op, agent)`` read *seen* lacks; the
    function returned puts the answers into *seen*.  A read answered with an error is
    left out: the machine's own read asks it again and raises the error where it always
    did."""
    wanted = [(key, op, agent) for key, op, agent in reads if key not in seen]
    if len(wanted) < 2:
        return _nothing  # nothing to pipeline: the machine's own read asks it
    sent = impl.send_many([(op, {"agent": agent}) for _, op, agent in wanted])
    return lambda: _keep(seen, wanted, sent.results())


def act_then_read(
    impl: Implementation,
    seen: MutableMapping[K, Any],
    op: str,
    args: Mapping[str, Any],
    reads: Iterable[tuple[K, str, str]],
) -> Callable[[], tuple[str, Any]]:
    """Send the operation *op* in one batch with the reads the invariants make right
    after it; the function returned reads impl's outcome (``("ok", result)`` or
    ``("error", code)``) and refills *seen* with the reads' answers.

    The host receives the same requests in the same order as when the operation and then
    the reads are asked one after the other (read_ahead): only the round trip between
    them goes.  *seen* is emptied now (the operation may change every read); a read
    answered with an error is left out, as in ``read_ahead``."""
    seen.clear()
    wanted = list(reads)
    sent = impl.send_many([(op, args), *((o, {"agent": agent}) for _, o, agent in wanted)])

    def outcome() -> tuple[str, Any]:
        answers = sent.results()
        _keep(seen, wanted, answers[1:])
        first = answers[0]
        if isinstance(first, ImplementationError):
            return "error", first.code
        return "ok", first

    return outcome


def reference_reads(
    oracle: Implementation,
    reads: Iterable[tuple[K, str, str]],
    known: Mapping[K, Callable[[], Any]] | None = None,
) -> dict[K, Callable[[], Any]]:
    """The reference's answer to each ``(key, op, agent)`` read: *known*'s, or taken now
    (while the host answers impl's batch of the same reads), each kept as ``attempt``
    keeps it.  Valid until the reference's next operation: reads change no state."""
    known = known or {}
    return {
        key: known.get(key) or attempt(oracle.call, op, agent=agent) for key, op, agent in reads
    }


def attempt(call: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Callable[[], T]:
    """``call(*args, **kwargs)`` now (a reference read, while the host computes); the
    function returned gives its result, or raises what it raised, where the machine
    made the call before: the checks in between still come first."""
    try:
        value = call(*args, **kwargs)
    except Exception as exc:
        error = exc

        def fail() -> T:
            raise error

        return fail
    return lambda: value


def _nothing() -> None:
    return None


def _keep(
    seen: MutableMapping[K, Any], reads: list[tuple[K, str, str]], answers: list[Any]
) -> None:
    """Put each read's answer into *seen* under its key, unless it is an error (the
    machine's own read asks that one again and raises it where it always did)."""
    for (key, _, _), answer in zip(reads, answers, strict=True):
        if not isinstance(answer, ImplementationError):
            seen[key] = answer
