"""Per-source byte retention of a projected snapshot (seed 000 "Budget and retention").

RET-* requirements.  Each source's serialized data object (tag-safe JSON, the same
serializer as the prompt, SER-006) is capped independently.  Phase 1 drops the oldest
non-checkpoint messages, never a checkpoint and never the newest message; phase 2
head/tail-slices the longest remaining text with an exact omission notice; when the fixed
fields alone cannot fit, retention fails with BUDGET_EXCEEDED (the whole preparation
fails, RET-004, PREP-005).

The algorithm is upstream's (research note A §4.3, D-33..D-38) and produces the same bytes,
but its cost is not: upstream re-serializes the whole object for every dropped message.
Here the object's size is ``fixed + Σ item sizes + commas`` (JSON members are
independent), phase 1 is one backward scan that sizes only the messages it keeps, and
phase 2 finds the longest text with a heap -- O(n log n) in the number of messages.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from typing import Any, Final

from attrs import define, frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.headtail import truncate_with_notice
from dsh_conformance.model.projection import Projected, project
from dsh_conformance.model.serialization import stringify_tag_safe
from dsh_conformance.model.session import SessionHeader
from dsh_conformance.model.snapshot import SessionSnapshot

#: The default per-source cap (seed: "65,536 UTF-8 bytes by default").
DEFAULT_MAX_REFERENCE_BYTES: Final = 65_536


#: Bytes that JSON escapes (C0 controls, quote, backslash) or tag-safety rewrites (``<``).
_SPECIAL: Final = bytes(range(0x20)) + b'"\\<'
_NOT_SPECIAL: Final = bytes(b for b in range(256) if b not in _SPECIAL)
_SHORT_ESCAPES: Final = b"\b\t\n\f\r"
#: A lone surrogate under ``surrogatepass``: ED A0..BF xx (a paired one never occurs).
_LONE_SURROGATE: Final = re.compile(b"\xed[\xa0-\xbf]")


def tag_safe_length(text: str) -> int:
    """UTF-8 bytes of *text* as tag-safe JSON, computed without building the JSON.

    ``JSON.stringify`` adds two quotes, one byte for ``"`` ``\\`` and the five short
    escapes, five for every other C0 control (``\\u00xx``) and three for a lone surrogate
    (``\\udxxx`` instead of 3 raw bytes); tag safety adds five per ``<``.  Counting on
    the encoded bytes keeps memory at one copy of the text (a serializer's worst-case
    buffer for a 20 MB text is over 300 MB).
    """
    return tag_safe_length_of(text.encode("utf-8", "surrogatepass"))


def tag_safe_length_of(data: bytes) -> int:
    """``tag_safe_length`` of a text given as its ``surrogatepass`` UTF-8 bytes."""
    specials = data.translate(None, _NOT_SPECIAL)
    extra = 0
    if specials:
        quotes = specials.count(b'"') + specials.count(b"\\")
        less = specials.count(b"<")
        short = sum(specials.count(bytes([b])) for b in _SHORT_ESCAPES)
        controls = len(specials) - quotes - less - short
        extra = quotes + short + 5 * controls + 5 * less
    if b"\xed" in data:
        extra += 3 * len(_LONE_SURROGATE.findall(data))
    return len(data) + 2 + extra


_ITEM_FIXED: Final = {
    role: jsstr.utf8_length(stringify_tag_safe({"role": role, "text": ""})) - 2
    for role in ("user", "assistant")
}


@frozen
class RetentionStats:
    """The six per-source statistics, in the metadata's key order (ENV-008, ENV-011)."""

    compacted: bool
    original_messages: int
    retained_messages: int
    omitted_messages: int
    omitted_bytes: int
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "compacted": self.compacted,
            "originalMessages": self.original_messages,
            "retainedMessages": self.retained_messages,
            "omittedMessages": self.omitted_messages,
            "omittedBytes": self.omitted_bytes,
            "truncated": self.truncated,
        }


@frozen
class RetainedSource:
    """One source's data object (JSON, key order significant), its stats and its size."""

    data: dict[str, Any]
    stats: RetentionStats
    size: int
    #: Per retained message, in conversation order: the exact UTF-8 bytes its text leaves
    #: out, and whether it is a current compact checkpoint (the typed ``sources`` field).
    omitted: tuple[int, ...] = ()
    checkpoints: tuple[bool, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"data": self.data, "stats": self.stats.to_json(), "size": self.size}

    def typed(self) -> dict[str, Any]:
        """The protocol's typed account of this source (docs/protocol-reference.md, issue 36).

        ``serializedBytes`` is measured on the data object as serialized, not taken from
        the incremental bookkeeping, so a defect in that bookkeeping shows in the field.
        """
        conversation = self.data["conversation"]
        omitted = self.omitted or (0,) * len(conversation)
        checkpoints = self.checkpoints or (False,) * len(conversation)
        return {
            "serializedBytes": jsstr.utf8_length(stringify_tag_safe(self.data)),
            "omittedMessages": self.stats.omitted_messages,
            "messages": [
                {"role": c["role"], "text": c["text"], "omittedBytes": o, "checkpoint": k}
                for c, o, k in zip(conversation, omitted, checkpoints, strict=True)
            ],
        }


def byte_length(text: str) -> int:
    """``Buffer.byteLength`` of a canonical string (projection canonicalizes its texts)."""
    return len(text.encode("utf-8", "surrogatepass"))


def text_encoder(text: str) -> bytes:
    """``TextEncoder.encode``: the strict fast path, U+FFFD for lone surrogates otherwise."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return jsstr.utf8_encode(text)


@define
class _Item:
    role: str
    original: str
    checkpoint: bool
    text: str
    omitted: int = 0
    size: int = 0  # tag-safe JSON bytes of {"role", "text"}
    length: int = -1  # UTF-8 bytes of the current text (computed on demand)
    raw: bytes | None = None  # surrogatepass UTF-8 of the original, encoded once

    def resize(self) -> int:
        """Measure the current text: one encoding gives its length and its JSON size."""
        if self.text is self.original:
            if self.raw is None:
                self.raw = self.original.encode("utf-8", "surrogatepass")
            data = self.raw
        else:
            data = self.text.encode("utf-8", "surrogatepass")
        self.length = len(data)
        self.size = _ITEM_FIXED[self.role] + tag_safe_length_of(data)
        return self.size

    def encoded_original(self) -> bytes:
        """``TextEncoder`` bytes of the original (the raw bytes unless it has lone surrogates)."""
        raw = self.raw if self.raw is not None else self.original.encode("utf-8", "surrogatepass")
        if b"\xed" in raw and _LONE_SURROGATE.search(raw):
            return text_encoder(self.original)
        return raw

    def text_length(self) -> int:
        if self.length < 0:
            self.length = byte_length(self.text)
        return self.length


def _budget_exceeded() -> DshError:
    return DshError(
        ErrorCode.BUDGET_EXCEEDED,
        "referenced session snapshot cannot fit the configured byte budget",
    )


def _data(
    session: SessionHeader, captured: int | None, label: str, items: list[_Item]
) -> dict[str, Any]:
    return {
        "sessionId": session.id,
        "label": label,
        "cwd": session.cwd,
        "capturedThroughSeq": captured,
        "conversation": [{"role": item.role, "text": item.text} for item in items],
    }


def _size(fixed: int, items_bytes: int, count: int) -> int:
    return fixed + items_bytes + max(0, count - 1)


def retain(
    snapshot: SessionSnapshot,
    label: str,
    max_bytes: int = DEFAULT_MAX_REFERENCE_BYTES,
    projected: Sequence[Projected] | None = None,
) -> RetainedSource:
    """RET-001..RET-011: the capped data object of one source, or BUDGET_EXCEEDED."""
    original = project(snapshot.events) if projected is None else projected
    return retain_projected(
        snapshot.session, snapshot.captured_through_seq, label, max_bytes, original
    )


def retain_projected(
    session: SessionHeader,
    captured: int | None,
    label: str,
    max_bytes: int,
    original: Sequence[Projected],
) -> RetainedSource:
    """``retain`` of a snapshot known by its header, capture seq and projection (a
    snapshot given as JSON is projected in the same pass that checks it:
    ``snapshot.project_json``)."""
    fixed = jsstr.utf8_length(stringify_tag_safe(_data(session, captured, label, [])))

    # Phase 1: keep checkpoints and the newest item; keep the longest run of the newest
    # droppable items that fits (== upstream dropping oldest-first until it fits, D-33).
    # Only kept items are ever serialized; dropped ones are only counted.
    newest = len(original) - 1
    # One pass over every message: the checkpoints, and the bytes of them all (a dropped
    # message is only counted, never serialized).
    checkpoints = []
    all_bytes = 0
    for i, p in enumerate(original):
        if p.checkpoint:
            checkpoints.append(i)
        length = p.length
        all_bytes += length if length >= 0 else byte_length(p.text)
    kept: dict[int, _Item] = {
        i: _Item(original[i].role, original[i].text, original[i].checkpoint, original[i].text)
        for i in (
            checkpoints if not original or original[newest].checkpoint else [*checkpoints, newest]
        )
    }
    count = len(kept)
    total = sum(item.resize() for item in kept.values())
    for i in range(newest - 1, -1, -1):
        p = original[i]
        if p.checkpoint:
            continue
        candidate = _Item(p.role, p.text, p.checkpoint, p.text)
        size = candidate.resize()
        if _size(fixed, total + size, count + 1) > max_bytes:
            break
        kept[i] = candidate
        total += size
        count += 1
    retained = [kept[i] for i in sorted(kept)]
    dropped = len(original) - len(retained)
    dropped_bytes = all_bytes - sum(
        original[i].length if original[i].length >= 0 else byte_length(original[i].text)
        for i in kept
    )

    # Phase 2: slice the longest remaining text (first of equals) until the object fits.
    size = _size(fixed, total, count)
    heap = [(-item.text_length(), i) for i, item in enumerate(retained)] if size > max_bytes else []
    heapq.heapify(heap)
    encoded: dict[int, bytes] = {}
    # Every pass strictly shortens one text, moves one to its bare notice (once each) or
    # retires one that can shrink no further, so the loop ends; the bound turns a broken
    # invariant into a failure instead of a hang.
    bound = -sum(length for length, _ in heap) + 2 * len(heap) + 1
    while size > max_bytes:
        bound -= 1
        if bound < 0:
            raise RuntimeError("retention phase 2 did not converge")
        while heap and -heap[0][0] != retained[heap[0][1]].text_length():
            heapq.heappop(heap)  # stale entry
        if not heap or heap[0][0] == 0:
            raise _budget_exceeded()  # nothing left to shorten: the source cannot fit
        longest, li = -heap[0][0], heap[0][1]
        item = retained[li]
        target = max(0, longest - (size - max_bytes))
        if li not in encoded:
            encoded[li] = item.encoded_original()
        short = truncate_with_notice(item.original, target, encoded[li])
        old = item.size
        # Upstream's slice is never longer than the target, so strictly shorter.  Where
        # upstream would empty the text, D-37's bare notice is taken only if it is shorter
        # than the original (so no text ever grows past it) and smaller as JSON.
        if not short.fits and not (
            byte_length(short.text) < len(encoded[li])
            and _ITEM_FIXED[item.role] + tag_safe_length(short.text) < old
        ):
            # This message is as small as it can be, but the next-longest text may still
            # shrink (RET-011, D-37).
            heapq.heappop(heap)
            continue
        item.text, item.omitted, item.length = short.text, short.omitted, -1
        size += item.resize() - old
        heapq.heappush(heap, (-item.text_length(), li))

    omitted_bytes = sum(item.omitted for item in retained) + dropped_bytes
    stats = RetentionStats(
        compacted=bool(checkpoints),
        original_messages=len(original),
        retained_messages=len(retained),
        omitted_messages=dropped,
        omitted_bytes=omitted_bytes,
        truncated=dropped > 0 or omitted_bytes > 0,
    )
    return RetainedSource(
        _data(session, captured, label, retained),
        stats,
        size,
        tuple(item.omitted for item in retained),
        tuple(item.checkpoint for item in retained),
    )
