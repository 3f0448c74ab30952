"""Side sessions, merge-back: one length-capped sidechat context into the parent.

"Merge-back: ask the child for a length-capped handback, then inject one plugin-sourced
context/message into the parent.  The next parent request sees it at its logged position,
preserving replay and request reconstructability without a new session event." (seed 004,
SIDE-009, SIDE-010, SIDE-025, SIDE-031).  The pure parts live here: the cap (D-96), the
handback request (D-106), finding the handback in the child's log (D-106), and the merged
text with its truncation (D-97, D-98) and meta (D-103).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.headtail import truncate_with_notice
from dsh_conformance.model.session import Event, is_safe_int
from dsh_conformance.model.side_framing import SIDECHAT_SOURCE

#: D-96: the cap counts UTF-8 bytes of the merged text.
DEFAULT_CAP: Final = 4096
MIN_CAP: Final = 256
MAX_CAP: Final = 65_536

#: D-97: the merged text starts with this heading; the cap covers it.
HANDBACK_HEADING: Final = "## Side-session handback\n\n"
HEADING_BYTES: Final = jsstr.utf8_length(HANDBACK_HEADING)

#: ``meta.kind`` of a merge-back context (D-103).
HANDBACK_KIND: Final = "sidechat/handback"


def validate_cap(value: object) -> int:
    """SIDE-055 (D-96): a cap, or DSH_SIDE_INVALID_CAP; ``None`` means the default."""
    if value is None:
        return DEFAULT_CAP
    if isinstance(value, int) and is_safe_int(value) and MIN_CAP <= value <= MAX_CAP:
        return value
    raise DshError(
        ErrorCode.SIDE_INVALID_CAP,
        f"a merge-back cap must be an integer from {MIN_CAP} to {MAX_CAP}, got {value!r}",
    )


def handback_request(cap: int) -> str:
    """D-106: the text side.askHandback sends the child (it names the byte limit)."""
    limit = cap - HEADING_BYTES
    return (
        "Write a handback note for the main session: the conclusions of this side "
        f"session that the main session should know, in at most {limit} UTF-8 bytes. "
        "Reply with the note only."
    )


def _text_of(event: Event) -> str:
    data: Any = event.data
    content = data.get("content", ()) if isinstance(data, Mapping) else ()
    return "".join(
        str(block.get("text", ""))
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def find_handback(events: Sequence[Event], seed_length: int) -> str | None:
    """SIDE-058 (D-106): the child's latest handback, or None.

    The latest turn the child appended (after its seed) that was triggered by a
    sidechat-sourced message and ended ``completed`` decides: its handback is the
    concatenated text blocks of its last assistant/message with non-empty text (None if
    it has none).  Aborted or failed answers never count.
    """
    found: str | None = None
    asked = False
    text: str | None = None
    for event in events[seed_length:]:
        data: Any = event.data
        if event.type == "turn/start":
            trigger = data.get("trigger") if isinstance(data, Mapping) else None
            asked = (
                isinstance(trigger, Mapping)
                and trigger.get("kind") == "message"
                and trigger.get("source") == SIDECHAT_SOURCE
            )
            text = None
        elif event.type == "assistant/message" and asked:
            candidate = _text_of(event)
            if candidate:
                text = candidate
        elif event.type == "turn/end" and asked:
            reason = data.get("reason") if isinstance(data, Mapping) else None
            if isinstance(reason, Mapping) and reason.get("kind") == "completed":
                found = text or None  # the latest completed answer decides, even without text
            asked = False
    return found


@frozen
class MergedText:
    """The merged text and what the cap cost (D-97, D-103)."""

    text: str
    original_bytes: int
    omitted_bytes: int

    @property
    def truncated(self) -> bool:
        return self.omitted_bytes > 0


def merged_text(handback: str, cap: int, *, explicit: bool) -> MergedText:
    """SIDE-056, SIDE-057: heading + handback within *cap* UTF-8 bytes.

    A model handback over the cap is shortened with the cross-session note's head/tail
    slicing and omission notice (D-97); a caller-supplied one is refused (D-98).
    """
    handback = jsstr.canonical(handback)
    original = jsstr.utf8_length(handback)
    budget = cap - HEADING_BYTES
    if original <= budget:
        return MergedText(HANDBACK_HEADING + handback, original, 0)
    if explicit:
        raise DshError(
            ErrorCode.SIDE_HANDBACK_OVER_CAP,
            f"the handback is {original + HEADING_BYTES} UTF-8 bytes merged, over the cap {cap}",
            hint="shorten the handback or raise the cap",
        )
    cut = truncate_with_notice(handback, budget)
    return MergedText(HANDBACK_HEADING + cut.text, original, cut.omitted)


def merge_content(merged: MergedText) -> tuple[FrozenDict, ...]:
    """The merge-back context's content: one text block."""
    return (FrozenDict({"type": "text", "text": merged.text}),)


def merge_meta(child_session: str, merged: MergedText) -> FrozenDict:
    """SIDE-060 (D-103): the meta naming the child and the cap's cost."""
    return FrozenDict(
        {
            "kind": HANDBACK_KIND,
            "version": 1,
            "sessionId": child_session,
            "originalBytes": merged.original_bytes,
            "omittedBytes": merged.omitted_bytes,
            "truncated": merged.truncated,
        }
    )
