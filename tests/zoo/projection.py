"""Projection defects: what a source's current surface contributes (PROJ-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.reference import prepare_ops
from dsh_conformance.model import projection
from dsh_conformance.model.session import Event, SessionLog
from dsh_conformance.model.snapshot import SessionSnapshot, captured_through_seq
from zoo import Area
from zoo._base import Broken, Patch

AREA = Area(capabilities=["projection"], requirements=["PROJ-*"])

_project_event = projection.project_event


def _text_of(content: object) -> str:
    if not isinstance(content, list | tuple):
        return ""
    texts = [
        b["text"] for b in content if isinstance(b, Mapping) and isinstance(b.get("text"), str)
    ]
    return "\n".join(texts)


class InjectedContextProjected(Broken):
    name = "injected context projected"
    invariant = "Projects `context/message` events (injected context) as user text."
    kills = frozenset({"PROJ-004"})
    collateral_ok = frozenset({"PROJ-008"})

    def patches(self) -> tuple[Patch, ...]:
        def project_event(event: Event) -> projection.ProjectedItem | None:
            if event.type == "context/message" and isinstance(event.data, Mapping):
                text = _text_of(event.data.get("content"))
                return projection.ProjectedItem("user", text) if text else None
            return _project_event(event)

        return ((projection, "project_event", project_event),)


class ReasoningProjected(Broken):
    name = "reasoning projected"
    invariant = "Projects every assistant block with a string `text`, reasoning included."
    kills = frozenset({"PROJ-004"})
    collateral_ok = frozenset({"PROJ-010"})

    def patches(self) -> tuple[Patch, ...]:
        def project_event(event: Event) -> projection.ProjectedItem | None:
            if event.type == "assistant/message" and isinstance(event.data, Mapping):
                text = _text_of(event.data.get("content"))
                return projection.ProjectedItem("assistant", text) if text else None
            return _project_event(event)

        return ((projection, "project_event", project_event),)


class BakedPromptRecursive(Broken):
    name = "baked prompt re-exported"
    invariant = (
        "Projects a baked prompt's full content not "
        "(earlier snapshot included), its displayContent."
    )
    kills = frozenset({"PROJ-003"})
    # The same defect breaks these too; the nested snapshot it projects is a hidden text
    # inside a kept message (PROJ-004).
    collateral_ok = frozenset({"PROJ-004", "PROJ-006", "PROJ-009", "PROJ-010"})

    def patches(self) -> tuple[Patch, ...]:
        def display(event: Event, data: Mapping[str, Any]) -> Any:
            return projection._blocks(event, data.get("content"), "content")

        return ((projection, "_display", display),)


class SteeringDropped(Broken):
    name = "steering not projected"
    invariant = "Drops user `steering/message` events from the projection."
    kills = frozenset({"PROJ-001"})
    collateral_ok = frozenset({"PROJ-009"})

    def patches(self) -> tuple[Patch, ...]:
        def project_event(event: Event) -> projection.ProjectedItem | None:
            return None if event.type == "steering/message" else _project_event(event)

        return ((projection, "project_event", project_event),)


class CheckpointsDropped(Broken):
    name = "checkpoints not projected"
    invariant = "Drops compact checkpoint user messages (plugin source) like other plugin messages."
    kills = frozenset({"PROJ-001"})
    collateral_ok = frozenset({"PROJ-002", "PROJ-005"})

    def patches(self) -> tuple[Patch, ...]:
        def project_event(event: Event) -> projection.ProjectedItem | None:
            item = _project_event(event)
            return None if item is not None and item.checkpoint else item

        return ((projection, "project_event", project_event),)


class TextJoinedWithoutLf(Broken):
    name = "text blocks concatenated"
    invariant = "Joins a message's text blocks with no separator instead of LF."
    kills = frozenset({"PROJ-006"})
    collateral_ok = frozenset(
        {
            "PROJ-001",
            "PROJ-002",
            "PROJ-003",
            "PROJ-004",
            "PROJ-005",
            "PROJ-007",
            "PROJ-008",
            "PROJ-009",
        }
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        def text(event: Event, blocks: Any) -> str:
            return "".join(
                b["text"] for b in blocks if b.get("type") == "text" and type(b.get("text")) is str
            )

        return ((projection, "_text", text),)


class ShadowedHistory(Broken):
    name = "raw log replayed"
    invariant = (
        "Reads the whole raw log instead of the folded current "
        "surface, so shadowed pre-compaction messages come back."
    )
    kills = frozenset({"PROJ-005"})
    collateral_ok = frozenset({"PROJ-004"})

    def patches(self) -> tuple[Patch, ...]:
        def read_log(log: SessionLog) -> SessionSnapshot:
            events = log.events
            return SessionSnapshot(log.header, captured_through_seq(events), tuple(events))

        return ((prepare_ops, "read_log", read_log),)


class CheckpointByWholeSource(Broken):
    name = "checkpoint only for the bare compact source"
    invariant = (
        "Recognizes a checkpoint only when its source equals {kind: 'plugin', plugin: "
        "'compact'} exactly, so a compaction backend adding its own fields is not one."
    )
    kills = frozenset({"PROJ-002"})
    collateral_ok = frozenset({"PROJ-008"})  # the profile's marker rule, restated

    def patches(self) -> tuple[Patch, ...]:
        def project_event(event: Event) -> projection.ProjectedItem | None:
            item = _project_event(event)
            data = event.data if isinstance(event.data, Mapping) else {}
            if item is None or not item.checkpoint or data.get("source") == _BARE:
                return item
            return None  # a plugin-sourced message that is not a checkpoint: not projected

        return ((projection, "project_event", project_event),)


_BARE = {"kind": "plugin", "plugin": "compact"}


class CaptureSeqOfTheSurface(Broken):
    name = "capture seq of the last surface node"
    invariant = (
        "Reports capturedThroughSeq as the seq of the last current surface node, not of the "
        "last raw event the read observed."
    )
    kills = frozenset({"PROJ-007"})

    def patches(self) -> tuple[Patch, ...]:
        def read_log(log: SessionLog) -> SessionSnapshot:
            surface = tuple(log.surface())
            seq = surface[-1].seq if surface else None
            return SessionSnapshot(log.header, seq, surface)

        return ((prepare_ops, "read_log", read_log),)


MEMBERS = (
    InjectedContextProjected,
    ReasoningProjected,
    BakedPromptRecursive,
    SteeringDropped,
    CheckpointsDropped,
    TextJoinedWithoutLf,
    ShadowedHistory,
    CheckpointByWholeSource,
    CaptureSeqOfTheSurface,
)
