"""Side sessions, advisor framing: one plugin-sourced context at the child's head.

"Advisor framing: inject one plugin-sourced context/message after creation that tells the
child to explain without mutating or continuing the task.  Keeping the system prompt
byte-identical preserves the provider prefix cache over inherited history." (seed 004,
SIDE-007, SIDE-008, SIDE-024, SIDE-053; D-94, D-95).

The text is a constant, so every child's framing is byte-identical and nothing about the
parent leaks into it; the parent's id travels in the model-hidden meta only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.session import Event, fold_surface

#: The one plugin that owns both ends of a side session (D-94; merge-back is the seed's).
SIDECHAT: Final = "sidechat"

#: ``{kind: "plugin", plugin: "sidechat"}``: the source of the framing and of merge-backs.
SIDECHAT_SOURCE: Final = FrozenDict({"kind": "plugin", "plugin": SIDECHAT})

#: ``meta.kind`` of the framing context.
FRAMING_KIND: Final = "sidechat/framing"

#: The advisor framing text (D-94).  Never interpolated.
FRAMING_TEXT: Final = (
    "## Side session\n"
    "\n"
    "This is a side session forked from the conversation above. The user has stepped "
    "aside to ask questions about it. Act as a read-only advisor: explain, answer and "
    "advise. Do not modify files or any other state, do not call tools that change "
    "anything, and do not continue or complete the task from the conversation above; "
    "the main session carries on separately. If the user asks for a handback, reply "
    "with a short note for the main session."
)


def framing_content() -> tuple[FrozenDict, ...]:
    """The framing's content: one text block holding FRAMING_TEXT."""
    return (FrozenDict({"type": "text", "text": FRAMING_TEXT}),)


def framing_meta(parent_session: str) -> FrozenDict:
    """``{kind: "sidechat/framing", version: 1, parentSession}`` (D-94)."""
    return FrozenDict({"kind": FRAMING_KIND, "version": 1, "parentSession": parent_session})


def _is_framing(event: Event) -> bool:
    data: Any = event.data
    if event.type != "context/message" or not isinstance(data, Mapping):
        return False
    meta = data.get("meta")
    return (
        data.get("source") == SIDECHAT_SOURCE
        and isinstance(meta, Mapping)
        and meta.get("kind") == FRAMING_KIND
    )


def framing_events(events: Sequence[Event], seed_length: int) -> list[Event]:
    """The framing context/messages in the appended history ``events[seed_length:]``."""
    return [e for e in events[seed_length:] if _is_framing(e)]


def is_framed(events: Sequence[Event], seed_length: int) -> bool:
    """SIDE-054: has the child's appended history a framing context?"""
    return bool(framing_events(events, seed_length))


def appended_surface(events: Sequence[Event], seed_length: int) -> list[Event]:
    """Surface events the child appended after its seed, in model order (D-95)."""
    return [e for e in fold_surface(events) if e.seq >= seed_length]


def framing_is_head(events: Sequence[Event], seed_length: int) -> bool:
    """SIDE-024: exactly one framing, and it is the first appended surface event."""
    appended = appended_surface(events, seed_length)
    return (
        len(framing_events(events, seed_length)) == 1
        and bool(appended)
        and _is_framing(appended[0])
    )


__all__ = [
    "FRAMING_KIND",
    "FRAMING_TEXT",
    "SIDECHAT",
    "SIDECHAT_SOURCE",
    "appended_surface",
    "framing_content",
    "framing_events",
    "framing_is_head",
    "framing_meta",
    "is_framed",
]
