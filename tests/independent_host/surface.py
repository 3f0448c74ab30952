"""Fold a session log to its current surface and project the conversation a reference carries."""

from __future__ import annotations

import copy
from typing import Any

from tests.independent_host.errors import HostError

BAD = "DSH_INVALID_EVENT"
SURFACE_TYPES = frozenset(
    {"user/message", "assistant/message", "tool/result", "context/message", "steering/message"}
)


def _seq_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


def _check_session(session: Any) -> tuple[dict[str, Any], list[Any]]:
    if not isinstance(session, dict):
        raise HostError(BAD, "a session is an object {header, events}")
    header, events = session.get("header"), session.get("events")
    if not isinstance(header, dict) or not isinstance(header.get("id"), str):
        raise HostError(BAD, "the session header needs a string id")
    if not isinstance(events, list):
        raise HostError(BAD, "session events must be an array")
    return header, events


def fold(session: Any) -> dict[str, Any]:
    """One observation: detached header, seq of the last raw event, current surface events."""
    header, events = _check_session(session)
    nodes: list[dict[str, Any]] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("seq") != index or not _seq_int(index):
            raise HostError(BAD, f"event {index} is missing or its seq is not {index}")
        if not isinstance(event.get("type"), str):
            raise HostError(BAD, f"event {index} has no string type")
        op, prov = event.get("surfaceOp"), event.get("sourceEventSeqs")
        if event["type"] not in SURFACE_TYPES:
            if op is not None or prov is not None or "surfaceOp" in event:
                raise HostError(BAD, f"event {index} is not a surface event but names a surfaceOp")
            continue
        if prov is not None:
            if not isinstance(prov, list) or not all(_seq_int(s) and s < index for s in prov):
                raise HostError(BAD, f"event {index} has invalid sourceEventSeqs")
            if len(set(prov)) != len(prov):
                raise HostError(BAD, f"event {index} repeats a source seq")
        if op == "append":
            nodes.append(event)
            continue
        if not isinstance(op, dict) or set(op) != {"op", "start", "end"} or op["op"] != "replace":
            raise HostError(BAD, f"event {index} has an invalid surfaceOp")
        if not _seq_int(op["start"]) or not _seq_int(op["end"]):
            raise HostError(BAD, f"event {index} has an invalid replace range")
        seqs = [node["seq"] for node in nodes]
        if op["start"] not in seqs or op["end"] not in seqs:
            raise HostError(BAD, f"event {index} replaces nodes not on the surface")
        lo, hi = seqs.index(op["start"]), seqs.index(op["end"])
        if lo > hi:
            raise HostError(BAD, f"event {index} replaces an inverted range")
        shadowed = seqs[lo : hi + 1]
        if not isinstance(prov, list) or not set(shadowed) <= set(prov):
            raise HostError(BAD, f"event {index} does not cite every node it replaces")
        nodes[lo : hi + 1] = [event]
    return {
        "session": copy.deepcopy(header),
        "capturedThroughSeq": len(events) - 1 if events else None,
        "events": copy.deepcopy(nodes),
    }


def _text_of(blocks: Any) -> str:
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise HostError(BAD, "message content must be an array of blocks")
    return "\n".join(
        b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _prompt_text(data: dict[str, Any]) -> str:
    """A prompt that carries an envelope shows only its direct display content."""
    envelope = data.get("envelope")
    if isinstance(envelope, dict) and "displayContent" in envelope:
        return _text_of(envelope["displayContent"])
    return _text_of(data.get("content"))


def _kind(data: dict[str, Any]) -> tuple[Any, Any]:
    source = data.get("source")
    if not isinstance(source, dict):
        return None, None
    return source.get("kind"), source.get("plugin")


def project(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """Direct user prompts, steering, completed assistant text and compact checkpoints."""
    items: list[dict[str, Any]] = []
    for event in snapshot["events"]:
        data, kind = event.get("data"), event.get("type")
        if kind not in ("user/message", "steering/message", "assistant/message"):
            continue
        if not isinstance(data, dict):
            raise HostError(BAD, f"event {event.get('seq')} data must be an object")
        if kind == "assistant/message":
            text, role, checkpoint = _text_of(data.get("content")), "assistant", False
        else:
            who, plugin = _kind(data)
            checkpoint = kind == "user/message" and who == "plugin" and plugin == "compact"
            if who != "user" and not checkpoint:
                continue
            text, role = _prompt_text(data), "user"
        if text:
            items.append({"role": role, "text": text, "checkpoint": checkpoint})
    return items


def latest_title(session: dict[str, Any]) -> str | None:
    """The latest session/title whose title is a string, if any."""
    title = None
    for event in session.get("events", []):
        if isinstance(event, dict) and event.get("type") == "session/title":
            data = event.get("data")
            if isinstance(data, dict) and isinstance(data.get("title"), str):
                title = data["title"]
    return title
