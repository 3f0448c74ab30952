"""Tiny independent oracles for the preparation tests (standard library only, no model code).

Each restates one seed invariant in the plainest terms: the bytes JSON.stringify would
write, what "a head/tail slice with exact omitted bytes" means, how Promise.all settles.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from dsh_conformance.conformance.js_objects import js_dumps

#: Key order of one per-source metadata record (D-40), in the seed's meta and in the
#: release's recall source alike.
RECORD_KEYS = [
    "sessionId",
    "label",
    "capturedThroughSeq",
    "compacted",
    "originalMessages",
    "retainedMessages",
    "omittedMessages",
    "omittedBytes",
    "truncated",
    "inputIndex",
]

LONE = re.compile("[\ud800-\udfff]")
NOTICE = re.compile(r"\n\[\u2026 omitted (\d+) UTF-8 bytes \u2026\]\Z")
OPEN, CLOSE = "<referenced-sessions>\n", "\n</referenced-sessions>"


def js_json(value: object) -> str:
    """JSON.stringify (compact): Python's json in JavaScript's key order, plus the ES2019
    lone-surrogate escape."""
    text = js_dumps(value, ensure_ascii=False, separators=(",", ":"))
    return LONE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def tag_safe_bytes(value: object) -> int:
    """UTF-8 length of the tag-safe serialization of *value*."""
    return len(js_json(value).replace("<", "\\u003c").encode("utf-8"))


def encoded(text: str) -> bytes:
    """TextEncoder: lone surrogates become U+FFFD."""
    return LONE.sub("\ufffd", text).encode("utf-8")


def utf8_len(text: str) -> int:
    """Buffer.byteLength."""
    return len(encoded(text))


#: A decimal count written in a cut text: digits not adjoining other digits.
COUNT = re.compile(rb"(?<![0-9])[0-9]+(?![0-9])")


def _prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of *a* and *b* (binary search over C-speed slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common(a: bytes, b: bytes) -> tuple[int, int]:
    """Bytes *a* and *b* share at the start and at the end (each at most the shorter)."""
    return _prefix(a, b), _prefix(a[::-1], b[::-1])


def cut_readings(text: str, original: str) -> list[tuple[int, int, int]]:
    """Every reading of *text* as a cut of *original* that records its omitted bytes.

    RET-003 (seed, D-197): the note asks for "head/tail slicing" that "records exact
    omitted bytes", not for the reference's notice.  A reading splits the text's UTF-8
    bytes into kept bytes around one marker that holds the decimal count *omitted*; the
    kept bytes are the original's first *head* bytes then its last bytes, and kept plus
    *omitted* is the original's length, something omitted.  The marker's wording and
    place (after the kept bytes, as the reference writes it, before them, or between
    head and tail) are free; an unmarked slice has no reading.  Returned as (fewest head
    bytes, most head bytes, omitted) per admissible marker position.
    """
    data, whole = encoded(text), encoded(original)
    out: list[tuple[int, int, int]] = []
    for match in COUNT.finditer(data):
        omitted = int(match.group())
        kept = len(whole) - omitted
        size = len(data) - kept  # the marker's length
        if not 0 < omitted <= len(whole) or size < match.end() - match.start():
            continue
        for start in range(max(0, match.end() - size), min(match.start(), len(data) - size) + 1):
            rest = data[:start] + data[start + size :]
            prefix, suffix = _common(rest, whole)
            low, high = max(0, kept - suffix), min(prefix, kept)
            if low <= high:
                out.append((low, high, omitted))
    return out


def _balanced(reading: tuple[int, int, int], original: str) -> tuple[int, int]:
    """The (head, tail) split of *reading* whose halves are closest in size."""
    low, high, omitted = reading
    kept = utf8_len(original) - omitted
    head = min(max(kept // 2, low), high)
    return head, kept - head


def truncation_of(text: str, original: str, claimed: int | None = None) -> int | None:
    """If *text* is a valid head/tail cut of *original*, its exact omitted count.

    With *claimed* (an implementation's own ``omittedBytes``), that count when some
    reading records it, else None; without, the count of the most balanced reading.
    """
    readings = cut_readings(text, original)
    if claimed is not None:
        return claimed if any(r[2] == claimed for r in readings) else None
    if not readings:
        return None

    def imbalance(reading: tuple[int, int, int]) -> int:
        head, tail = _balanced(reading, original)
        return abs(head - tail)

    return min(readings, key=imbalance)[2]


def data_region(prompt: str) -> str:
    """The text between the opening tag line and the final closing tag."""
    start = prompt.index(OPEN) + len(OPEN)
    assert prompt.endswith(CLOSE)
    return prompt[start : len(prompt) - len(CLOSE)]


def js_loads(text: str) -> Any:
    return json.loads(text)


def kept_items(
    conversation: Sequence[Any],
    expected: Sequence[Any],
    same: Callable[[Any, Any], bool] | None = None,
) -> list[Any] | None:
    """RET-002/RET-005: the expected items the conversation retained, or None.

    The conversation must be the checkpoints, the newest item and a suffix of the others:
    try every cut k, keeping expected items that are checkpoints, at index >= k, or last;
    each kept item must be its conversation entry, whole or a slice of it (*same*, by
    default is_this_message: the reference layout's entries).
    """
    same = same or is_this_message
    last = len(expected) - 1
    for k in range(len(expected) + 1):
        kept = [e for i, e in enumerate(expected) if e["checkpoint"] or i >= k or i == last]
        if len(kept) == len(conversation) and all(
            same(c, e) for c, e in zip(conversation, kept, strict=True)
        ):
            return kept
    return None


def is_this_message(entry: dict[str, Any], item: dict[str, Any]) -> bool:
    """Whether a retained entry is *item*, whole or cut -- without judging the cut's
    exactness (RET-003 does), so an inexact slice is not also reported as a lost message.

    A cut (D-197) is an exact reading (``cut_readings``), or a text holding a count that
    shares its first or last byte with the original or is short enough to be a bare marker.
    """
    if entry["role"] != item["role"]:
        return False
    if entry["text"] == item["text"]:
        return True
    if cut_readings(entry["text"], item["text"]):
        return True
    data, whole = encoded(entry["text"]), encoded(item["text"])
    if COUNT.search(data) is None:
        return False
    prefix, suffix = _common(data, whole)
    return prefix > 0 or suffix > 0 or len(data) < 80


def upstream_fixture_events() -> list[dict[str, Any]]:
    """Research note A §2.2: upstream's pinned projection fixture (14 events, seq 0..13)."""
    user, compact = {"kind": "user"}, {"kind": "plugin", "plugin": "compact"}

    def text(t: str) -> list[dict[str, str]]:
        return [{"type": "text", "text": t}]

    reasoning = [{"type": "reasoning", "text": "r"}]
    specs: list[tuple[str, dict[str, Any], Any, list[int] | None]] = [
        ("user/message", {"content": text("old user"), "source": user}, "append", None),
        (
            "assistant/message",
            {"turn": 0, "step": 0, "content": text("old assistant")},
            "append",
            None,
        ),
        (
            "user/message",
            {
                "content": text("<compacted-summary>checkpoint</compacted-summary>"),
                "source": compact,
            },
            {"op": "replace", "start": 0, "end": 1},
            [0, 1],
        ),
        ("user/message", {"content": text("recent user"), "source": user}, "append", None),
        (
            "context/message",
            {"content": text("workspace secret"), "source": {"kind": "plugin", "plugin": "ws"}},
            "append",
            None,
        ),
        (
            "steering/message",
            {"turn": 1, "content": text("human steer"), "source": user},
            "append",
            None,
        ),
        (
            "steering/message",
            {
                "turn": 1,
                "content": text("plugin steer"),
                "source": {"kind": "plugin", "plugin": "loop"},
            },
            "append",
            None,
        ),
        (
            "tool/result",
            {"turn": 1, "step": 0, "callId": "c", "content": text("tool output"), "isError": False},
            "append",
            None,
        ),
        (
            "assistant/message",
            {"turn": 1, "step": 0, "content": [*reasoning, *text("visible answer")]},
            "append",
            None,
        ),
        (
            "user/message",
            {"content": text("plugin user"), "source": {"kind": "plugin", "plugin": "goal"}},
            "append",
            None,
        ),
        ("user/message", {"content": reasoning, "source": user}, "append", None),
        ("steering/message", {"turn": 1, "content": reasoning, "source": user}, "append", None),
        ("assistant/message", {"turn": 1, "step": 1, "content": reasoning}, "append", None),
        (
            "assistant/chunk",
            {"turn": 1, "step": 1, "chunk": {"type": "text", "text": "partial"}},
            None,
            None,
        ),
    ]
    events = []
    for seq, (type_, data, op, sources) in enumerate(specs):
        event: dict[str, Any] = {"type": type_, "seq": seq, "time": 0, "data": data}
        if op is not None:
            event["surfaceOp"] = op
        if sources is not None:
            event["sourceEventSeqs"] = sources
        events.append(event)
    return events


def upstream_fixture(sid: str = "source", cwd: str | None = None) -> dict[str, Any]:
    header: dict[str, Any] = {"version": 0, "id": sid, "createdAt": 1}
    if cwd is not None:
        header["cwd"] = cwd
    return {"header": header, "events": upstream_fixture_events()}


def notice_text(omitted: int) -> str:
    """The omission notice of D-37/RET-006 for *omitted* bytes."""
    return f"\n[\u2026 omitted {omitted} UTF-8 bytes \u2026]"


def cuts_of(text: str, original: str) -> tuple[int, int] | None:
    """The (head, tail) byte counts of a head/tail cut, most balanced reading.

    A repetitive original can be read as several prefix/suffix splits; the one whose two
    halves are closest in size is returned, so a balance check never fails by ambiguity.
    """
    splits = [_balanced(r, original) for r in cut_readings(text, original)]
    return min(splits, key=lambda s: abs(s[0] - s[1])) if splits else None


def smallest_form(text: str, slack: int = 0) -> str:
    """The shortest form a preserved message may take: its text or its bare notice (the
    notice padded by *slack* bytes, for another host's longer marker, D-197)."""
    bare = notice_text(utf8_len(text)) + " " * slack
    return bare if utf8_len(bare) < utf8_len(text) else text
