"""One read of a source session: detached header, capture seq and current surface.

Seed 000 "Decision", paragraph 3: ``readSurface(sessionId)`` loads one corpus observation,
folds it with the canonical surface algorithm (model/session.py) and returns a detached
header, capture seq and current nodes.  The snapshot is frozen: nothing that happens to
the source afterwards can reach it (PREP-008, D-47).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.session import (
    Event,
    SessionHeader,
    SessionLog,
    captured_through_seq,
    fold_surface,
)


@frozen
class SessionSnapshot:
    """``{session, capturedThroughSeq, events}``: what one read observed."""

    session: SessionHeader
    captured_through_seq: int | None
    events: tuple[Event, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session.to_json(),
            "capturedThroughSeq": self.captured_through_seq,
            "events": [e.to_json() for e in self.events],
        }

    @classmethod
    def from_json(cls, data: object, *, borrow: bool = False) -> SessionSnapshot:
        """A snapshot given directly as JSON (its events are taken as the surface).

        *borrow*: the events keep their data as given (``Event.borrow_json``), for a read
        that keeps nothing of the snapshot past its caller's return."""
        if not isinstance(data, Mapping) or not {"session", "events"} <= set(data):
            raise DshError(
                ErrorCode.INVALID_ARGUMENT, "a snapshot needs session, capturedThroughSeq, events"
            )
        seq = data.get("capturedThroughSeq")
        if seq is not None and (not isinstance(seq, int) or isinstance(seq, bool) or seq < 0):
            raise DshError(ErrorCode.INVALID_EVENT, "capturedThroughSeq must be null or a seq")
        events = data["events"]
        if not isinstance(events, list | tuple):
            raise DshError(ErrorCode.INVALID_EVENT, "snapshot events must be an array")
        return cls(
            SessionHeader.from_json(data["session"]),
            seq,
            tuple(map(Event.borrow_json if borrow else Event.from_json, events)),
        )


def read_surface(header: SessionHeader, events: Sequence[Event]) -> SessionSnapshot:
    """Fold a whole log (raises INVALID_EVENT) into a detached snapshot."""
    return SessionSnapshot(header, captured_through_seq(events), tuple(fold_surface(events)))


def read_log(log: SessionLog) -> SessionSnapshot:
    """Snapshot a live session without refolding (its fold is already current)."""
    events = log.events
    return SessionSnapshot(log.header, captured_through_seq(events), tuple(log.surface()))


def session_from_json(data: object) -> SessionLog:
    """Parse ``{header, events}`` and validate the whole log (INVALID_EVENT on any flaw)."""
    if not isinstance(data, Mapping) or "header" not in data or "events" not in data:
        raise DshError(ErrorCode.INVALID_EVENT, "a session must be an object {header, events}")
    header = SessionHeader.from_json(data["header"])
    events = data["events"]
    if not isinstance(events, list | tuple):
        raise DshError(ErrorCode.INVALID_EVENT, "a session log must be an array of events")
    return SessionLog.seeded(header, (Event.from_json(e) for e in events))
