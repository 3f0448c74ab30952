"""Projection: the current surface of a source session as plain conversation items.

Seed 000 "Snapshot and projection", paragraph 2 (PROJ-*).  Kept: direct-user messages and
user steering, completed assistant text, and checkpoint user messages carrying the compact
marker.  A prompt that carries a model-hidden envelope contributes only its
``displayContent`` (non-recursive, PROJ-003).  Everything else on the surface -- tool
results, injected context, other plugins' user messages, reasoning blocks -- projects to
nothing; shadowed nodes and log-only records never reach the surface at all (model/session).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, Literal, Protocol, TypeGuard

from attrs import field, frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.session import Event

#: The canonical source of a compact checkpoint (D-30): ``kind`` and ``plugin`` only.
COMPACT_SOURCE: Final = {"kind": "plugin", "plugin": "compact"}

Role = Literal["user", "assistant"]


@frozen
class ProjectedItem:
    """One projected message: its role, its text, and whether it is a compact checkpoint."""

    role: Role
    text: str
    checkpoint: bool = False
    #: ``Buffer.byteLength(text)`` when projection learned it (-1: not known).  Retention
    #: counts dropped messages with it instead of encoding each text a second time.
    length: int = field(default=-1, eq=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"role": self.role, "text": self.text, "checkpoint": self.checkpoint}


class Projected(Protocol):
    """What retention reads of a projected message: a ``ProjectedItem``, or one whose text
    stays in its stored log until it is read (model/stored.py)."""

    @property
    def role(self) -> Role: ...
    @property
    def text(self) -> str: ...
    @property
    def checkpoint(self) -> bool: ...
    @property
    def length(self) -> int: ...


def _is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(value, Mapping)`` with a fast path for the frozen event data."""
    return type(value) is FrozenDict or type(value) is dict or isinstance(value, Mapping)


def _invalid(event: Event | None, what: str) -> DshError:
    if event is None:  # a one-pass caller redoes the read on the general path (project_data)
        return DshError(ErrorCode.INVALID_EVENT, what)
    return DshError(ErrorCode.INVALID_EVENT, f"{event.type} at seq {event.seq}: {what}")


def text_content(blocks: Iterable[object]) -> str:
    """PROJ-006: the ``text`` of every text block, joined with LF (non-text blocks skipped).

    The result is canonical (D-1), so byte accounting may count surrogates directly.
    """
    texts = [
        block["text"]
        for block in blocks
        if _is_object(block) and block.get("type") == "text" and type(block.get("text")) is str
    ]
    return jsstr.canonical(texts[0] if len(texts) == 1 else "\n".join(texts))


def _blocks(event: Event | None, value: object, what: str) -> Sequence[Mapping[str, Any]]:
    if type(value) is not tuple and type(value) is not list:
        raise _invalid(event, f"{what} must be an array of content blocks")
    for block in value:
        kind = type(block)  # _is_object, inline: this runs for every block of every event
        if kind is not FrozenDict and kind is not dict and not isinstance(block, Mapping):
            raise _invalid(event, f"{what} must be an array of content blocks")
    return value


#: The accelerator's one-pass length of a string with no surrogate (-1 otherwise).
_CANONICAL_LENGTH: Final = jsstr._FAST.canonical_length if jsstr._FAST is not None else None


def _text(event: Event | None, blocks: Sequence[Mapping[str, Any]]) -> tuple[str, int]:
    """``text_content`` of already-validated blocks (canonical) and its UTF-8 length, with
    a one-block fast path."""
    if len(blocks) == 1:
        block = blocks[0]
        if type(block) is FrozenDict:
            block = block._data  # read in place: dict.get, not a Python-level get
        text = block.get("text")
        if block.get("type") != "text" or type(text) is not str:
            return "", 0
        if _CANONICAL_LENGTH is not None:  # jsstr.canonical_utf8_length's first step
            length = _CANONICAL_LENGTH(text)
            if length >= 0:
                return text, length
    else:
        text = text_content(blocks)
    return jsstr.canonical_utf8_length(text)


def _display(event: Event | None, data: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """PROJ-003, PROJ-009: ``envelope.displayContent`` if the prompt has one, else ``content``.

    Only the envelope's own display content is read, never the baked prefix, so a target
    message that carried an earlier snapshot re-exports its direct prompt only.
    """
    envelope = data.get("envelope")
    if envelope is not None:
        if not _is_object(envelope) or "displayContent" not in envelope:
            raise _invalid(event, "envelope must be an object with displayContent")
        return _blocks(event, envelope["displayContent"], "envelope.displayContent")
    return _blocks(event, data.get("content"), "content")


def _data(event: Event) -> Mapping[str, Any]:
    """The event's data object, read in place when it is frozen (projection reads a few
    keys of every event: ``dict.get`` itself, not FrozenDict's Python-level ``get``)."""
    data = event.data
    if type(data) is FrozenDict:
        return data._data
    if not _is_object(data):
        raise _invalid(event, "data must be an object")
    return data


_PROMPTS: Final = frozenset({"user/message", "steering/message"})


def _event_data(event: Event) -> Mapping[str, Any]:
    """``_data`` with the exact types read inline (this runs for every event)."""
    data = event.data
    kind = type(data)
    if kind is FrozenDict:
        return data._data  # type: ignore[no-any-return]
    if kind is dict:
        return data  # type: ignore[no-any-return]
    return _data(event)


def project_event(event: Event) -> ProjectedItem | None:
    """The item one surface event projects to, or None (PROJ-001, PROJ-004, PROJ-008, D-31)."""
    type_ = event.type
    if type_ != "assistant/message" and type_ not in _PROMPTS:
        return None  # tool/result, context/message, and anything else: never projected
    return project_data(type_, _event_data(event), event)


def project_data(type_: str, data: Mapping[str, Any], event: Event | None) -> ProjectedItem | None:
    """``project_event`` of an event of type *type_* whose data object is *data*.

    *event* names the event in an error; ``None`` is for a one-pass caller that, on any
    error, redoes the whole read on the general path to raise that path's first error
    (``snapshot.project_json``), so the message it gets here is never shown."""
    if type_ == "assistant/message":
        if data.get("interrupted") is True:
            return None  # incomplete assistant output (D-57)
        text, length = _text(event, _blocks(event, data.get("content"), "content"))
        return _item("assistant", text, False, length) if text else None
    if type_ not in _PROMPTS:
        return None
    source: Any = data.get("source")  # a Mapping whenever kind is not None
    if type(source) is FrozenDict:
        source = source._data
    # The source's kind, read once (this runs per event): a compact checkpoint is
    # kind "plugin" with plugin "compact" (PROJ-002, PROJ-008, D-30: extra fields ignored,
    # surfaceOp not consulted), a direct-human source kind "user".
    kind = source.get("kind") if type(source) is dict or _is_object(source) else None
    # Only a user/message can be a checkpoint; steering keeps direct-user sources only.
    checkpoint = type_ == "user/message" and kind == "plugin" and source.get("plugin") == "compact"
    if not checkpoint and kind != "user":
        return None
    text, length = _text(event, _display(event, data))
    return _item("user", text, checkpoint, length) if text else None


_new_item = object.__new__
_SET_ROLE, _SET_TEXT, _SET_CHECKPOINT, _SET_LENGTH = (
    ProjectedItem.__dict__[name].__set__ for name in ("role", "text", "checkpoint", "length")
)


def _item(role: Role, text: str, checkpoint: bool, length: int) -> ProjectedItem:
    """``ProjectedItem(role, text, checkpoint, length)`` through the slots' own setters
    (the frozen class's guarded ``__init__`` was a tenth of a projection)."""
    item: ProjectedItem = _new_item(ProjectedItem)
    _SET_ROLE(item, role)
    _SET_TEXT(item, text)
    _SET_CHECKPOINT(item, checkpoint)
    _SET_LENGTH(item, length)
    return item


def project(surface: Iterable[Event]) -> tuple[ProjectedItem, ...]:
    """PROJ-001..PROJ-006: project current surface events, in surface order."""
    items = []
    for event in surface:
        item = project_event(event)
        if item is not None:
            items.append(item)
    return tuple(items)
