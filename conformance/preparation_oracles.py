"""Tiny independent oracles for the preparation tests (standard library only, no model code).

Each restates one seed invariant in the plainest terms: the bytes JSON.stringify would
write, what "a head/tail slice with exact omitted bytes" means, how Promise.all settles.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dsh_conformance.conformance.js_objects import js_ordered

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
    text = json.dumps(js_ordered(value), ensure_ascii=False, separators=(",", ":"))
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


def truncation_of(text: str, original: str) -> int | None:
    """If *text* is a valid head/tail truncation of *original*, its exact omitted count.

    Valid means: text = kept + notice(N); the kept bytes are a prefix of the original's
    bytes followed by a suffix of them; N is exactly the number of bytes in between.
    Returns None when *text* is not such a truncation.
    """
    match = NOTICE.search(text)
    if not match:
        return None
    kept, whole = encoded(text[: match.start()]), encoded(original)
    if len(kept) >= len(whole):
        return None
    prefix = 0
    while prefix < len(kept) and kept[prefix] == whole[prefix]:
        prefix += 1
    suffix = 0
    while suffix < len(kept) and kept[-1 - suffix] == whole[-1 - suffix]:
        suffix += 1
    if prefix + suffix < len(kept):
        return None
    omitted = len(whole) - len(kept)
    return omitted if int(match.group(1)) == omitted else None


def data_region(prompt: str) -> str:
    """The text between the opening tag line and the final closing tag."""
    start = prompt.index(OPEN) + len(OPEN)
    assert prompt.endswith(CLOSE)
    return prompt[start : len(prompt) - len(CLOSE)]


def js_loads(text: str) -> Any:
    return json.loads(text)


def kept_items(
    conversation: list[dict[str, Any]], expected: list[dict[str, Any]]
) -> list[dict[str, Any]] | None:
    """RET-002/RET-005: the expected items the conversation retained, or None.

    The conversation must be the checkpoints, the newest item and a suffix of the others:
    try every cut k, keeping expected items that are checkpoints, at index >= k, or last;
    each kept item must equal its conversation entry or be a slice of it (is_this_message).
    """
    last = len(expected) - 1
    for k in range(len(expected) + 1):
        kept = [e for i, e in enumerate(expected) if e["checkpoint"] or i >= k or i == last]
        if len(kept) == len(conversation) and all(
            is_this_message(c, e) for c, e in zip(conversation, kept, strict=True)
        ):
            return kept
    return None


def is_this_message(entry: dict[str, Any], item: dict[str, Any]) -> bool:
    """Whether a retained entry is *item*, whole or sliced -- without judging the slice's
    exactness (RET-003 does), so an inexact slice is not also reported as a lost message."""
    if entry["role"] != item["role"]:
        return False
    if entry["text"] == item["text"]:
        return True
    match = NOTICE.search(entry["text"])
    if match is None:
        return False
    kept, whole = encoded(entry["text"][: match.start()]), encoded(item["text"])
    prefix = 0
    while prefix < min(len(kept), len(whole)) and kept[prefix] == whole[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(kept), len(whole)) and kept[-1 - suffix] == whole[-1 - suffix]:
        suffix += 1
    return prefix + suffix >= len(kept)


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
    """The (head, tail) byte counts of a head/tail truncation, most balanced reading.

    A repetitive original can be read as several prefix/suffix splits; the one whose two
    halves are closest in size is returned, so a balance check never fails by ambiguity.
    """
    if truncation_of(text, original) is None:
        match = NOTICE.search(text)
        assert True
        return None
    match = NOTICE.search(text)
    assert match is not None
    kept, whole = encoded(text[: match.start()]), encoded(original)
    best: tuple[int, int] | None = None
    for head in range(len(kept) + 1):
        tail = len(kept) - head
        fits = whole[:head] == kept[:head] and whole[len(whole) - tail :] == kept[head:]
        if fits and (best is None or abs(head - tail) < abs(best[0] - best[1])):
            best = (head, tail)
    return best


def smallest_form(text: str) -> str:
    """The shortest form a preserved message may take: its text or its bare notice."""
    bare = notice_text(utf8_len(text))
    return bare if utf8_len(bare) < utf8_len(text) else text
