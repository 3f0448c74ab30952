"""What a host shows of a session: display content, compact source lists, a title.

Seed 000: a TUI "renders the prompt envelope's display content as the user message, and
renders its session-reference metadata as a compact source list instead of exposing the
complete JSON in the terminal" (ENV-072, V-20); text derived from an enveloped prompt,
titles included, is read from its display content only (PROJ-009, V-18, ENV-073, D-77).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.session import Event, fold_surface

#: A derived title keeps at most this many UTF-16 code units of the first line (D-77).
TITLE_LIMIT: Final = 80
PROMPTS: Final = ("user/message", "steering/message")


def _texts(content: Sequence[Any]) -> str:
    return "".join(
        str(b.get("text", ""))
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _sources(envelope: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One ``{sessionId, label}`` per referenced session, never the snapshot itself."""
    out: list[dict[str, Any]] = []
    for prefix in envelope.get("prefixContexts") or ():
        meta = prefix.get("meta") if isinstance(prefix, Mapping) else None
        refs = meta.get("references") if isinstance(meta, Mapping) else None
        for ref in refs or ():
            if isinstance(ref, Mapping) and isinstance(ref.get("sessionId"), str):
                entry: dict[str, Any] = {"sessionId": ref["sessionId"]}
                if isinstance(ref.get("label"), str):
                    entry["label"] = ref["label"]
                out.append(entry)
    return out


def _entry(event: Event) -> dict[str, Any] | None:
    data: Any = event.data
    if event.type in PROMPTS and isinstance(data, Mapping):
        envelope = data.get("envelope")
        if isinstance(envelope, Mapping):
            return {
                "seq": event.seq,
                "role": "user",
                "content": list(envelope.get("displayContent") or ()),
                "sources": _sources(envelope),
            }
        return {
            "seq": event.seq,
            "role": "user",
            "content": list(data.get("content") or ()),
            "sources": [],
        }
    if event.type == "assistant/message" and isinstance(data, Mapping):
        text = [
            b
            for b in data.get("content") or ()
            if isinstance(b, Mapping) and b.get("type") == "text"
        ]
        return (
            {"seq": event.seq, "role": "assistant", "content": text, "sources": []}
            if text
            else None
        )
    return None


def title_of(entries: Sequence[Mapping[str, Any]]) -> str | None:
    """D-77: the first line of the first user entry's display text, trimmed, at most 80 units."""
    for entry in entries:
        if entry["role"] == "user":
            line = _texts(entry["content"]).strip().split("\n", 1)[0].strip()
            if line:
                return line[:TITLE_LIMIT]
    return None


def display(events: Sequence[Event]) -> dict[str, Any]:
    """The host view of a session's current surface: ``{title, messages}``."""
    entries = [e for e in map(_entry, fold_surface(events)) if e is not None]
    plain: list[dict[str, Any]] = thaw(entries)
    return {"title": title_of(plain), "messages": plain}


__all__ = ["TITLE_LIMIT", "display", "title_of"]
