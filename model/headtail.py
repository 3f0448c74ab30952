"""Head/tail byte slicing of one text with an exact omission notice (RET-003, RET-006, RET-009).

The seed's "dsh-retention head/tail slicing": keep at most ``head`` UTF-8 bytes from the
start and ``tail`` from the end, cut back to character boundaries, and count every byte
that is not in the output.  Texts are encoded with ``TextEncoder`` (a lone surrogate
becomes U+FFFD, D-4), so the bytes are always well-formed UTF-8; the boundary rules below
nevertheless follow upstream's byte-level ones (D-36), which for well-formed input reduce
to "the largest character-boundary prefix/suffix within the budget".

Cuts work on the encoded bytes by index only, so the binary search in
``truncate_with_notice`` costs O(log max) constant-time probes plus one final decode.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

from dsh_conformance.model import jsstr


def notice(omitted: int) -> str:
    """The exact omission notice: LF, ``[… omitted N UTF-8 bytes …]`` (RET-006)."""
    return f"\n[\u2026 omitted {omitted} UTF-8 bytes \u2026]"


#: UTF-8 length of the notice without its digits.
NOTICE_FIXED_BYTES: Final = jsstr.utf8_length(notice(0)) - 1


def notice_length(omitted: int) -> int:
    """UTF-8 bytes of ``notice(omitted)`` (32 for a one-digit count)."""
    return NOTICE_FIXED_BYTES + len(str(omitted))


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def prefix_end(data: bytes, end: int) -> int:
    """Trim a partial trailing sequence from ``data[:end]``; returns the new end.

    Walk back over at most three continuation bytes to the byte that should lead the
    sequence; if fewer bytes follow it than it declares, cut before it.  A stray
    continuation run or a byte that cannot lead is left alone (D-36).
    """
    i = end - 1
    while i >= 0 and _is_continuation(data[i]) and end - i <= 3:
        i -= 1
    if i < 0:
        return end
    lead = data[i]
    expected = (
        1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4 if lead < 0xF8 else 0
    )
    if expected == 0:
        return end
    return i if end - i < expected else end


def suffix_start(data: bytes, start: int) -> int:
    """Skip leading continuation bytes of ``data[start:]``; returns the new start."""
    while start < len(data) and _is_continuation(data[start]):
        start += 1
    return start


@frozen
class Cut:
    """A head/tail cut of ``total`` bytes: keep ``[0, head_end)`` and ``[tail_start, total)``."""

    head_end: int
    tail_start: int
    total: int

    @property
    def kept(self) -> int:
        return self.head_end + self.total - self.tail_start

    @property
    def omitted(self) -> int:
        return self.total - self.kept


def head_tail_cut(data: bytes, head: int, tail: int) -> Cut:
    """RET-003: the byte cut keeping at most *head* leading and *tail* trailing bytes."""
    total = len(data)
    prefix = min(total, head)
    suffix = min(total - prefix, tail)
    if total - prefix - suffix == 0:
        return Cut(total, total, total)  # nothing omitted: the text is kept whole
    return Cut(prefix_end(data, prefix), suffix_start(data, total - suffix), total)


def render(data: bytes, cut: Cut) -> str:
    """The kept text of *cut*: head and tail decoded separately (non-fatal decoder)."""
    if cut.omitted == 0:
        return jsstr.utf8_decode(data)
    return jsstr.utf8_decode(data[: cut.head_end]) + jsstr.utf8_decode(data[cut.tail_start :])


def head_tail(text: str, head: int, tail: int) -> tuple[str, int]:
    """Head/tail slice *text*: ``(kept text, exact omitted bytes)``."""
    data = jsstr.utf8_encode(text)
    cut = head_tail_cut(data, head, tail)
    if cut.omitted == 0:
        return text, 0
    return render(data, cut), cut.omitted


@frozen
class Truncation:
    """A shortened text, its exact omitted byte count, and whether it met the target."""

    text: str
    omitted: int
    fits: bool


def truncate_with_notice(text: str, max_bytes: int, data: bytes | None = None) -> Truncation:
    """RET-006, RET-009: the longest head/tail slice plus notice within *max_bytes*.

    Binary search over the kept-byte budget ``r`` (head ``ceil(r/2)``, tail ``floor(r/2)``)
    for the largest ``r`` whose slice plus notice fits, exactly as upstream (D-35).  When
    not even the bare notice fits, upstream returns the empty string with no notice; the
    model returns the bare notice with ``fits = False`` instead (D-37), so a truncated
    text always states what it lost.
    """
    if data is None:
        data = jsstr.utf8_encode(text)
    total = len(data)
    if total <= max_bytes:
        return Truncation(text, 0, True)
    best: Cut | None = None
    low, high = 0, max_bytes
    while low <= high:
        r = (low + high) // 2
        cut = head_tail_cut(data, (r + 1) // 2, r // 2)
        if cut.kept + notice_length(cut.omitted) <= max_bytes:
            best, low = cut, r + 1
        else:
            high = r - 1
    if best is None:
        return Truncation(notice(total), total, False)
    return Truncation(render(data, best) + notice(best.omitted), best.omitted, True)
