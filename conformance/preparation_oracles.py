"""Tiny independent oracles for the preparation tests (standard library only, no model code).

Each restates one seed invariant in the plainest terms: the bytes JSON.stringify would
write, what "a head/tail slice with exact omitted bytes" means, how Promise.all settles.
"""

from __future__ import annotations

import json
import re
from typing import Any

LONE = re.compile("[\ud800-\udfff]")
NOTICE = re.compile(r"\n\[\u2026 omitted (\d+) UTF-8 bytes \u2026\]\Z")
OPEN, CLOSE = "<referenced-sessions>\n", "\n</referenced-sessions>"


def js_json(value: object) -> str:
    """JSON.stringify (compact): Python's json plus the ES2019 lone-surrogate escape."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
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
    each kept item must equal its conversation entry or be a valid truncation of it.
    """
    last = len(expected) - 1
    for k in range(len(expected) + 1):
        kept = [e for i, e in enumerate(expected) if e["checkpoint"] or i >= k or i == last]
        if len(kept) == len(conversation) and all(
            c["role"] == e["role"]
            and (c["text"] == e["text"] or truncation_of(c["text"], e["text"]) is not None)
            for c, e in zip(conversation, kept, strict=True)
        ):
            return kept
    return None
