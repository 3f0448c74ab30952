"""Records a host logs for itself, set aside before any seed check reads a log (D-444).

Projection excludes "log-only records" (seed 000) and the notes never say a host logs only
their event types: a host may log more -- usage, timings, telemetry after each turn.
What the features may not add is a message event (ENV-052's "without a new event type",
SIDE-010's "without a new session event") or a ``sidechat/*`` event (SIDE-019, named by the
note).  So every seed check of ``scenario.run`` and ``side.scenario.run`` reads the outcome
with the host's own records removed: events of a type outside the note's vocabulary that
carry no ``surfaceOp`` and no ``sourceEventSeqs`` (nothing on the model's surface) and are
not ``sidechat/*``.  Every position the outcome states -- a step's ``logLength``, the child's
``seedLength`` -- is renumbered to the log without them, and the fork's view of the
parent is filtered alike, so positions and logs still agree.  An event of a new type that
does reach the surface stays: it is a message event, and the checks judge it.

The reference-identity tests (REF-007, REF-008) read the outcome as returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.conformance.agent_support import SEED_EVENT_TYPES


def is_own_record(event: object) -> bool:
    """A log-only event of the host's own type (D-444)."""
    if not isinstance(event, Mapping):
        return False
    kind = event.get("type")
    return (
        isinstance(kind, str)
        and kind not in SEED_EVENT_TYPES
        and not kind.startswith("sidechat/")
        and "surfaceOp" not in event
        and "sourceEventSeqs" not in event
    )


def _kept_before(events: Sequence[object]) -> list[int]:
    """For each position 0..len(events): how many events before it are kept."""
    out = [0]
    for event in events:
        out.append(out[-1] + (0 if is_own_record(event) else 1))
    return out


def _renumber(position: object, kept: Sequence[int]) -> object:
    """*position* in the log without the host's records (unchanged if it is no position)."""
    if type(position) is int and 0 <= position < len(kept):
        return kept[position]
    return position


def _log(log: object) -> tuple[object, list[int]]:
    """(*log* without the host's records, the renumbering of its positions)."""
    if not isinstance(log, Mapping) or not isinstance(log.get("events"), list):
        return log, []
    events = log["events"]
    return {**log, "events": [e for e in events if not is_own_record(e)]}, _kept_before(events)


def _seen(seen: object, kept: Sequence[int]) -> object:
    """A step's view of one session (``{status, logLength}``) in the renumbered log."""
    if not isinstance(seen, Mapping) or not kept:
        return seen
    return {**seen, "logLength": _renumber(seen.get("logLength"), kept)}


def scenario_outcome(result: Any) -> Any:
    """A ``scenario.run`` outcome without the host's own records (D-444)."""
    if not isinstance(result, Mapping):
        return result
    log, kept = _log(result.get("log"))
    if not kept:
        return result
    steps = result.get("steps")
    if isinstance(steps, list):
        steps = [_seen(s, kept) if isinstance(s, Mapping) else s for s in steps]
    return {**result, "log": log, "steps": steps}


def _session(session: object) -> tuple[object, list[int]]:
    if not isinstance(session, Mapping):
        return session, []
    log, kept = _log(session.get("log"))
    if not kept or not isinstance(log, Mapping):
        return session, []
    header = log.get("header")
    if isinstance(header, Mapping) and "seedLength" in header:
        log = {**log, "header": {**header, "seedLength": _renumber(header["seedLength"], kept)}}
    return {**session, "log": log}, kept


def side_outcome(result: Any) -> Any:
    """A ``side.scenario.run`` outcome without the host's own records (D-444): both logs,
    the child's seedLength, each step's view of each session and the fork's source."""
    if not isinstance(result, Mapping):
        return result
    out: dict[str, Any] = dict(result)
    kept: dict[str, list[int]] = {}
    for name in ("parent", "child"):
        if name in out:
            out[name], kept[name] = _session(out[name])
    steps = out.get("steps")
    if isinstance(steps, list):
        out["steps"] = [_side_step(s, kept) for s in steps]
    return out


def _side_step(step: object, kept: Mapping[str, list[int]]) -> object:
    if not isinstance(step, Mapping):
        return step
    out = dict(step)
    for name, positions in kept.items():
        if name in out:
            out[name] = _seen(out[name], positions)
    source = out.get("source")
    if isinstance(source, Mapping):
        out["source"] = {k: _log(v)[0] for k, v in source.items()}
    return out
