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

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.projection import _PROMPTS, ProjectedItem, _item, project, project_data
from dsh_conformance.model.session import (
    _APPEND_KEYS,
    _PLAIN_KEYS,
    MAX_SAFE_INTEGER,
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
        header, seq, events = _parts(data)
        return cls(
            header, seq, tuple(map(Event.borrow_json if borrow else Event.from_json, events))
        )


def _parts(data: object) -> tuple[SessionHeader, int | None, Sequence[object]]:
    """A snapshot's header, capture seq and raw events, checked in ``from_json``'s order."""
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
    return SessionHeader.from_json(data["session"]), seq, events


def project_json(
    data: object,
) -> tuple[SessionHeader, int | None, tuple[ProjectedItem, ...]]:
    """``project(SessionSnapshot.from_json(data, borrow=True).events)`` with the header and
    capture seq, in one pass over the events (issue 44: the op from JSON walked them twice,
    once to check and wrap each event, once to project it).

    An event of the common shape (``Event.borrow_json``'s own: a dict of the four fields,
    or five with ``"surfaceOp": "append"``, and a dict ``data``) is checked and projected
    where it stands, no ``Event`` built, nothing copied.  At the first event of any other
    shape, or the first projection error, the whole read is redone on the general path,
    which raises the error ``from_json`` then ``project`` raise (an envelope error of a
    later event before a projection error of an earlier one): the same code and message."""
    header, seq, events = _parts(data)
    items = _project_common(events)
    if items is None:
        items = project(tuple(map(Event.borrow_json, events)))  # every envelope first
    return header, seq, items


def _project_common(events: Sequence[object]) -> tuple[ProjectedItem, ...] | None:
    """``project_json``'s one pass, or None where it hands over to the general path: the
    events read by ``plain_projection`` (the accelerator's, or its definition below), each
    message of another shape than one text block read by ``project_data``."""
    fast = jsstr._FAST
    entries = fast.plain_projection(events) if fast is not None else _plain_projection(events)
    if entries is None:
        return None
    items: list[ProjectedItem] = []
    append = items.append
    try:
        for entry in entries:
            if len(entry) == 3:
                append(_item(entry[0], entry[1], False, entry[2]))
            else:
                item = project_data(entry[0], entry[1], None)
                if item is not None:
                    append(item)
    except DshError:
        return None
    return tuple(items)


def _plain_projection(events: object) -> list[tuple[Any, ...]] | None:
    """What model/_jsfast.c ``plain_projection`` returns (D-538): None unless *events* is
    a list or tuple of events of the common envelope (``Event.borrow_json``'s own shape: a
    dict of exact-str keys, the four fields or five with ``"surfaceOp": "append"``, a str
    type, safe non-negative int seq and time, a dict ``data`` where the type is
    projected); else one entry per message: ``(role, text, length)`` where
    ``_one_text_block`` reads it, ``(type, data)`` for ``project_data`` otherwise."""
    if type(events) is not list and type(events) is not tuple:
        return None
    out: list[tuple[Any, ...]] = []
    for raw in events:
        if type(raw) is not dict or not _str_keys(raw):
            return None
        keys = raw.keys()
        if keys != _PLAIN_KEYS and (keys != _APPEND_KEYS or not _is(raw["surfaceOp"], "append")):
            return None
        type_, seq, time = raw["type"], raw["seq"], raw["time"]
        if type(type_) is not str or not _safe_index(seq) or not _safe_index(time):
            return None
        assistant = type_ == "assistant/message"
        if not assistant and type_ not in _PROMPTS:
            continue  # never projected
        data = raw["data"]
        if type(data) is not dict:
            return None
        out.append(_one_text_block(data, assistant) or (type_, data))
    return out


def _one_text_block(data: dict[str, Any], assistant: bool) -> tuple[str, str, int] | None:
    """``(role, text, UTF-8 length)`` of the most common message, as ``project_data``
    projects it, or None for ``project_data`` to read: an uninterrupted assistant reply,
    or a prompt from the user without an envelope, whose content is one text block of
    non-empty text without a surrogate (what a long session is made of)."""
    if not _str_keys(data):
        return None
    if assistant:
        if data.get("interrupted") is True:
            return None
        role = "assistant"
    else:
        source = data.get("source")
        if type(source) is not dict or not _str_keys(source) or "envelope" in data:
            return None
        if not _is(source.get("kind"), "user"):
            return None
        role = "user"
    blocks = data.get("content")
    if type(blocks) is not list or len(blocks) != 1:
        return None
    block = blocks[0]
    if type(block) is not dict or not _str_keys(block) or not _is(block.get("type"), "text"):
        return None
    text = block.get("text")
    if type(text) is not str or not text:
        return None
    try:
        return role, text, len(text.encode("utf-8"))  # strict: a surrogate raises
    except UnicodeEncodeError:
        return None


def _str_keys(d: dict[Any, Any]) -> bool:
    return all(type(key) is str for key in d)


def _is(value: object, name: str) -> bool:
    return type(value) is str and value == name


def _safe_index(value: object) -> bool:
    return type(value) is int and 0 <= value <= MAX_SAFE_INTEGER


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
