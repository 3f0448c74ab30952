"""Session logs in the seed-era vocabulary, and the canonical surface fold.

A session is a header plus an append-only log of events ``{type, seq, time, data,
surfaceOp?, sourceEventSeqs?}`` (upstream ``@deepseek-ai/dsh-session`` at e819a586b0,
research note B §1.4).  Message-producing events carry a ``surfaceOp``: ``"append"`` adds a
node to the model surface, ``{op: "replace", start, end}`` shadows a contiguous range of
current nodes (compaction).  The *surface* is what the model sees now; shadowed nodes stay
in the raw log but are never shown again (PROJ-*, D-30..D-33).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from attrs import define, field, frozen

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw, wrap

#: Event types that produce model messages (seed era).
SURFACE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "context/message", "steering/message"}
)
MAX_SAFE_INTEGER: Final = 2**53 - 1


def is_safe_int(value: object, *, minimum: int = 0) -> bool:
    """``Number.isSafeInteger(value) && value >= minimum`` (a bool is not a number)."""
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and minimum <= value <= MAX_SAFE_INTEGER
    )


def _invalid(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_EVENT, message)


@frozen
class SessionHeader:
    """The immutable header: id, createdAt, and the optional lineage fields."""

    id: str
    created_at: int = 0
    cwd: str | None = None
    parent_session: str | None = None
    seed_length: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": 0, "id": self.id, "createdAt": self.created_at}
        if self.cwd is not None:
            out["cwd"] = self.cwd
        if self.parent_session is not None:
            out["parentSession"] = self.parent_session
        if self.seed_length is not None:
            out["seedLength"] = self.seed_length
        return out

    @classmethod
    def from_json(cls, data: object) -> SessionHeader:
        if not isinstance(data, Mapping) or not isinstance(data.get("id"), str):
            raise _invalid("session header must be an object with a string id")
        cwd = data.get("cwd")
        parent = data.get("parentSession")
        seed_length = data.get("seedLength")
        created = data.get("createdAt", 0)
        if cwd is not None and not isinstance(cwd, str):
            raise _invalid("session header cwd must be a string")
        if parent is not None and not isinstance(parent, str):
            raise _invalid("session header parentSession must be a string")
        if seed_length is not None and not is_safe_int(seed_length):
            raise _invalid("session header seedLength must be a non-negative safe integer")
        if not is_safe_int(created):
            raise _invalid("session header createdAt must be a non-negative safe integer")
        return cls(data["id"], created, cwd, parent, seed_length)


@frozen
class Replace:
    """``{op: "replace", start, end}``: shadow the current surface nodes from seq *start*
    to seq *end*, inclusive (event seqs, never surface positions: data.json, D-293)."""

    start: int
    end: int


SurfaceOp = str | Replace | None


@frozen
class Event:
    """One immutable log event; ``data`` is deeply frozen JSON."""

    type: str
    seq: int
    time: int
    data: Any = field(converter=freeze)
    surface_op: SurfaceOp = None
    source_event_seqs: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return thaw(self.frozen_json())  # type: ignore[no-any-return]

    def frozen_json(self) -> FrozenDict:
        """The event's JSON as a frozen value sharing ``data``: ``to_json`` thaws it, and a
        log keeps one per event so that reading the whole log is one ``thaw``."""
        out: dict[str, Any] = {
            "type": self.type,
            "seq": self.seq,
            "time": self.time,
            "data": self.data,
        }
        if isinstance(self.surface_op, Replace):
            out["surfaceOp"] = wrap(
                {"op": "replace", "start": self.surface_op.start, "end": self.surface_op.end}
            )
        elif self.surface_op is not None:
            out["surfaceOp"] = self.surface_op
        if self.source_event_seqs is not None:
            out["sourceEventSeqs"] = tuple(self.source_event_seqs)
        return wrap(out)

    @classmethod
    def from_json(cls, data: object) -> Event:
        """Parse one event, checking the envelope shape (not the surface rules)."""
        if not isinstance(data, Mapping):
            raise _invalid("an event must be an object")
        extra = set(data) - {"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs"}
        if extra:
            raise _invalid(f"unknown event field(s): {', '.join(sorted(extra))}")
        if not isinstance(data.get("type"), str):
            raise _invalid("event type must be a string")
        if not is_safe_int(data.get("seq")):
            raise _invalid("event seq must be a non-negative safe integer")
        time = data.get("time", 0)
        if not is_safe_int(time):
            raise _invalid("event time must be a non-negative safe integer")
        if "data" not in data:
            raise _invalid("event data is required")
        return cls(
            type=data["type"],
            seq=data["seq"],
            time=time,
            data=data["data"],
            surface_op=_parse_surface_op(data["surfaceOp"]) if "surfaceOp" in data else None,
            source_event_seqs=_parse_sources(data["sourceEventSeqs"])
            if "sourceEventSeqs" in data
            else None,
        )

    @classmethod
    def borrow_json(cls, data: object) -> Event:
        """``from_json`` for a read that is over before its caller returns (issue 44):
        the same checks and the same errors, in one pass, but ``data`` is kept as given,
        not deep-frozen.  Only for an op that keeps nothing of the event and returns
        nothing that shares its containers: retention and projection of a snapshot
        given as JSON (adapters/reference/prepare_ops.py), where a frozen copy cost more
        than the whole retention."""
        if type(data) is dict:
            keys = data.keys()
            surface: SurfaceOp = None
            if keys == _APPEND_KEYS and data["surfaceOp"] == "append":
                surface = "append"
            elif keys != _PLAIN_KEYS:
                return cls.from_json(data)
            type_, seq, time = data["type"], data["seq"], data["time"]
            if (
                type(type_) is str
                and type(seq) is int
                and type(time) is int
                and 0 <= seq <= MAX_SAFE_INTEGER
                and 0 <= time <= MAX_SAFE_INTEGER
            ):
                event = _new_event(cls)
                _SET_TYPE(event, type_)
                _SET_SEQ(event, seq)
                _SET_TIME(event, time)
                _SET_DATA(event, data["data"])
                _SET_SURFACE_OP(event, surface)
                _SET_SOURCES(event, None)
                return event
        return cls.from_json(data)  # any other shape: the general path and its errors


#: The two shapes ``borrow_json`` reads itself (any other goes to ``from_json``).
_PLAIN_KEYS: Final = frozenset({"type", "seq", "time", "data"})
_APPEND_KEYS: Final = frozenset({"type", "seq", "time", "data", "surfaceOp"})
_new_event = object.__new__
# The slots' own setters: a borrowed event is built without the frozen class's
# ``__setattr__`` guard and without the ``freeze`` converter (that is the point).
_SET_TYPE, _SET_SEQ, _SET_TIME, _SET_DATA, _SET_SURFACE_OP, _SET_SOURCES = (
    Event.__dict__[name].__set__
    for name in ("type", "seq", "time", "data", "surface_op", "source_event_seqs")
)


def _parse_surface_op(value: object) -> SurfaceOp:
    if value == "append":
        return "append"
    if (
        isinstance(value, Mapping)
        and set(value) == {"op", "start", "end"}
        and value["op"] == "replace"
        and is_safe_int(value["start"])
        and is_safe_int(value["end"])
    ):
        return Replace(value["start"], value["end"])
    raise _invalid(f"invalid surfaceOp {value!r}")


def _parse_sources(value: object) -> tuple[int, ...]:
    if not isinstance(value, list | tuple) or not all(is_safe_int(v) for v in value):
        raise _invalid("sourceEventSeqs must be an array of non-negative safe integers")
    return tuple(value)


def events_from_json(items: object) -> tuple[Event, ...]:
    """Parse and fold-validate a whole log given as JSON."""
    if not isinstance(items, list | tuple):
        raise _invalid("a session log must be an array of events")
    events = tuple(Event.from_json(item) for item in items)
    fold_surface(events)
    return events


class SurfaceFold:
    """Incremental canonical fold: feed events in order, read the current surface.

    Validates what upstream's fold validates: contiguous seqs, surfaceOp on exactly the
    surface types, provenance earlier than the event, replace ranges on current nodes
    that list every shadowed node in ``sourceEventSeqs``.  ``feed`` is atomic: an invalid
    event raises INVALID_EVENT and changes nothing.
    """

    def __init__(self) -> None:
        self.count = 0
        self.nodes: list[Event] = []

    def feed(self, event: Event) -> None:
        if event.seq != self.count:
            raise _invalid(
                f"event at index {self.count} has seq {event.seq}; seqs must be contiguous"
            )
        if event.type not in SURFACE_TYPES:
            if event.surface_op is not None or event.source_event_seqs is not None:
                raise _invalid(f"{event.type} at seq {event.seq} is not a surface event")
            self.count += 1
            return
        if event.surface_op is None:
            raise _invalid(f"{event.type} at seq {event.seq} requires a surfaceOp")
        sources = event.source_event_seqs
        if sources is not None:
            if not sources and event.type != "assistant/message":
                raise _invalid(f"empty sourceEventSeqs at seq {event.seq}")
            if len(set(sources)) != len(sources) or any(s >= event.seq for s in sources):
                raise _invalid(f"invalid sourceEventSeqs at seq {event.seq}")
        if event.surface_op == "append":
            self.nodes.append(event)
            self.count += 1
            return
        assert isinstance(event.surface_op, Replace)
        op = event.surface_op
        seqs = [node.seq for node in self.nodes]
        if op.start not in seqs or op.end not in seqs:
            raise _invalid(f"surface replace at seq {event.seq}: range not on the surface")
        lo, hi = seqs.index(op.start), seqs.index(op.end)
        if lo > hi:
            raise _invalid(f"surface replace at seq {event.seq}: start after end")
        if sources is None or not set(seqs[lo : hi + 1]) <= set(sources):
            raise _invalid(f"surface replace at seq {event.seq} must cite every shadowed node")
        self.nodes[lo : hi + 1] = [event]
        self.count += 1


def fold_surface(events: Sequence[Event]) -> list[Event]:
    """The current surface of a whole log, in model order (raises INVALID_EVENT)."""
    fold = SurfaceFold()
    for event in events:
        fold.feed(event)
    return list(fold.nodes)


def captured_through_seq(events: Sequence[Event]) -> int | None:
    """The seq of the last raw event (any type), or None for an empty log."""
    return events[-1].seq if events else None


def derive_message(event: Event) -> dict[str, Any] | None:
    """The model message one surface event contributes (None when it contributes nothing).

    Derivation reads ``content`` verbatim and never the model-hidden envelope, source or
    meta (ENV-*): what the model saw is reconstructable from the log alone.
    """
    data: Mapping[str, Any] = event.data if isinstance(event.data, Mapping) else FrozenDict()
    if event.type in {"user/message", "context/message", "steering/message"}:
        return {"role": "user", "content": thaw(data.get("content", ()))}
    if event.type == "assistant/message":
        content = thaw(data.get("content", ()))
        if not content:
            return None
        out: dict[str, Any] = {"role": "assistant", "content": content}
        if "provenance" in data:
            out["provenance"] = thaw(data["provenance"])
        return out
    if event.type == "tool/result":
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": thaw(data.get("callId")),
                    "content": thaw(data.get("content", ())),
                    "isError": thaw(data.get("isError", False)),
                }
            ],
        }
    return None


def derive_messages(events: Sequence[Event]) -> list[dict[str, Any]]:
    """Replay: the model messages the current surface of *events* produces, in order."""
    out = []
    for event in fold_surface(events):
        message = derive_message(event)
        if message is not None:
            out.append(message)
    return out


@define
class SessionLog:
    """A live, append-only session: the header and its validated events.

    State lives here because the seeds give sessions state; everything read from it is a
    frozen ``Event`` or a thawed copy.
    """

    header: SessionHeader
    _events: list[Event] = field(factory=list, init=False)
    _fold: SurfaceFold = field(factory=SurfaceFold, init=False)
    #: ``frozen_json`` of each event, in order: ``to_json`` is one thaw of them (issue 44:
    #: lockstep tests read every log after every step).
    _forms: list[FrozenDict] = field(factory=list, init=False, eq=False, repr=False)

    @classmethod
    def seeded(cls, header: SessionHeader, seed: Iterable[Event]) -> SessionLog:
        log = cls(header)
        for event in seed:
            log._push(event)
        return log

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    def __len__(self) -> int:
        return len(self._events)

    def append(
        self,
        type: str,
        data: Any,
        *,
        time: int = 0,
        surface_op: SurfaceOp = None,
        source_event_seqs: Sequence[int] | None = None,
    ) -> Event:
        """Validate and append one event; returns the frozen event."""
        if surface_op is None and type in SURFACE_TYPES:
            surface_op = "append"
        event = Event(
            type=type,
            seq=len(self._events),
            time=time,
            data=data,
            surface_op=surface_op,
            source_event_seqs=None if source_event_seqs is None else tuple(source_event_seqs),
        )
        self._push(event)
        return event

    def _push(self, event: Event) -> None:
        self._fold.feed(event)  # validates before anything changes
        self._events.append(event)
        self._forms.append(event.frozen_json())

    def surface(self) -> list[Event]:
        return list(self._fold.nodes)

    def derive_messages(self) -> list[dict[str, Any]]:
        return [m for m in map(derive_message, self._fold.nodes) if m is not None]

    def to_json(self) -> dict[str, Any]:
        return {"header": self.header.to_json(), "events": thaw(self._forms)}
