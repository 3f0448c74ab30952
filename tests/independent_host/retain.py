"""Per-source byte retention, this host's own way.

The cap bounds the tag-safe JSON of one source's entry in the context (`entry`), the very
bytes the context carries. Older ordinary messages go first, oldest first; compact
checkpoints and the newest exchange (the last message, and the user prompt it answers) stay.
A text that still does not fit keeps about two thirds head and one third tail around a
notice naming the exact bytes left out.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from attrs import define, field

from tests.independent_host.errors import HostError
from tests.independent_host.jsvalue import char_bytes, normalize, stringify, utf8_len

OVER = "SESSION_REFERENCE_BUDGET_EXCEEDED"


def notice(omitted: int) -> str:
    return f"\n[[ {omitted} bytes omitted ]]\n"


@define
class Sliced:
    text: str
    omitted: int


@lru_cache(maxsize=64)
def _layout(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The characters of a text and the UTF-8 bytes before each (prefix sums)."""
    chars = tuple(normalize(text))
    sums = [0]
    for char in chars:
        sums.append(sums[-1] + char_bytes(char))
    return chars, tuple(sums)


def slice_text(text: str, keep: int) -> Sliced:
    """Head (about 2/3) and tail of at most `keep` bytes, whole characters, notice between."""
    chars, sums = _layout(text)
    total = sums[-1]
    head_end = bisect_right(sums, -(-2 * keep // 3)) - 1
    used = sums[head_end]
    # the tail: the fewest trailing characters... the most whose bytes fit what is left
    tail_start = bisect_left(sums, total - (keep - used))
    tail_start = max(tail_start, head_end)
    tail_used = total - sums[tail_start]
    omitted = total - used - tail_used
    body = "".join(chars[:head_end]) + notice(omitted) + "".join(chars[tail_start:])
    return Sliced(body, omitted)


def best_slice(text: str, fits: Callable[[Sliced], bool]) -> Sliced | None:
    """The slice keeping the most bytes `fits` accepts; None when not even the bare notice does."""
    low, high, best = 0, utf8_len(text) - 1, None
    while low <= high:
        mid = (low + high) // 2
        candidate = slice_text(text, mid)
        if fits(candidate):
            best, low = candidate, mid + 1
        else:
            high = mid - 1
    return best


def truncate(text: str, max_bytes: int) -> dict[str, Any]:
    """retention.truncate: the text within max_bytes raw UTF-8 bytes, notice included."""
    if utf8_len(text) <= max_bytes:
        return {"text": text, "omittedBytes": 0, "fits": True}
    found = best_slice(text, lambda s: utf8_len(s.text) <= max_bytes)
    if found is None:
        bare = slice_text(text, 0)
        return {"text": bare.text, "omittedBytes": bare.omitted, "fits": False}
    return {"text": found.text, "omittedBytes": found.omitted, "fits": True}


@define
class Kept:
    role: str
    original: str
    checkpoint: bool
    text: str = field()
    omitted: int = 0
    minimal: bool = False

    @text.default
    def _text(self) -> str:
        return self.original


@define
class Retained:
    """One source after retention: what the context carries and what was left out."""

    messages: list[Kept]
    dropped: int
    dropped_bytes: int
    entry: dict[str, Any]
    size: int


def protected(items: list[dict[str, Any]]) -> set[int]:
    """Checkpoints, the last message and, when it is a reply, the prompt just before it."""
    keep = {i for i, item in enumerate(items) if item["checkpoint"]}
    if items:
        last = len(items) - 1
        keep.add(last)
        if items[last]["role"] == "assistant" and last > 0 and items[last - 1]["role"] == "user":
            keep.add(last - 1)
    return keep


def _row(kept: Kept) -> dict[str, Any]:
    row: dict[str, Any] = {"from": kept.role, "text": kept.text}
    if kept.checkpoint:
        row["compactSummary"] = True
    return row


def make_entry(fixed: dict[str, Any], messages: list[Kept], dropped: int) -> dict[str, Any]:
    """This host's JSON for one source (its own field names)."""
    entry = dict(fixed)
    entry["earlierMessagesLeftOut"] = dropped
    entry["messages"] = [_row(kept) for kept in messages]
    return entry


def _cost(text: str) -> int:
    return utf8_len(stringify(text, tag_safe=True))


def measure(entry: dict[str, Any]) -> int:
    return utf8_len(stringify(entry, tag_safe=True))


def retain(fixed: dict[str, Any], items: list[dict[str, Any]], cap: int) -> Retained:
    """Fit one source's entry within cap bytes, or fail the whole preparation.

    The entry's size is its frame (fixed fields, the dropped count, empty message list)
    plus each row's own serialization plus the commas between rows: JSON concatenates.
    """
    if measure(make_entry(fixed, [], 0)) > cap:
        raise HostError(OVER, "this source's fixed fields alone exceed its byte cap")
    keep = protected(items)
    messages = [Kept(it["role"], it["text"], it["checkpoint"]) for it in items]
    rows = [measure(_row(m)) for m in messages]
    dropped: set[int] = set()

    def live() -> list[int]:
        return [i for i in range(len(messages)) if i not in dropped]

    def size(replace: tuple[int, int] | None = None) -> int:
        alive = live()
        total = measure(make_entry(fixed, [], len(dropped))) + max(0, len(alive) - 1)
        for i in alive:
            total += replace[1] if replace is not None and replace[0] == i else rows[i]
        return total

    for index in range(len(messages)):
        if size() <= cap:
            break
        if index not in keep:
            dropped.add(index)
    while size() > cap:
        shrinkable = [i for i in live() if not messages[i].minimal]
        if not shrinkable:
            raise HostError(OVER, "the preserved messages cannot fit this source's byte cap")
        at = max(shrinkable, key=lambda i: utf8_len(messages[i].text))
        target = messages[at]

        def fits(candidate: Sliced, at: int = at, target: Kept = target) -> bool:
            trial = Kept(target.role, target.original, target.checkpoint, candidate.text)
            return size((at, measure(_row(trial)))) <= cap

        found = best_slice(target.original, fits)
        if found is not None:
            target.text, target.omitted = found.text, found.omitted
            rows[at] = measure(_row(target))
            break
        bare = slice_text(target.original, 0)
        target.minimal = True
        if _cost(bare.text) < _cost(target.text):
            target.text, target.omitted = bare.text, bare.omitted
            rows[at] = measure(_row(target))
    final = [messages[i] for i in live()]
    entry = make_entry(fixed, final, len(dropped))
    dropped_bytes = sum(utf8_len(messages[i].original) for i in dropped)
    return Retained(final, len(dropped), dropped_bytes, entry, measure(entry))
