"""Reading prepare and retention results for their meaning through the typed fields (issue 36).

A host lays out its prepared context its own way; the notes only say it is one JSON context
beneath a fixed warning.  Which sessions it holds, in which order, their retained messages,
the exact bytes each message leaves out and each source's size as the host measured it come
from the protocol's typed ``sources`` (prepare) and ``source`` (retention.retain) fields
(docs/protocol-reference.md).  A result without them (a host of protocol 2, which was
published without them) is read for the same meaning from its rendering and the fields
protocol 2 asked for (conformance/untyped_sources.py, D-520); a malformed typed field is
unreadable (D-522): only the checks needing it judge nothing, never a requirement's
failure.

The rendered text is read only for what the notes say of it (``context_json``): some JSON
value right before the final closing tag, with a warning above it.  Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.checks import expect
from dsh_conformance.conformance.preparation_oracles import (
    _prefix,
    cut_readings,
    encoded,
    kept_items,
    tag_safe_bytes,
)
from dsh_conformance.unjudged import UnreadableField

CLOSE_TAG: Final = "</referenced-sessions>"
OPEN_TAG: Final = "<referenced-sessions"
ROLES: Final = frozenset({"user", "assistant"})


def _int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


#: Why a typed field cannot be read: (pointer, what it must be, the value seen).
Why = tuple[str, str, object]


def _field(op: str, pointer: str, expected: str, seen: object) -> UnreadableField:
    """The typed field at *pointer* cannot be read (D-522): only checks needing it stop."""
    from dsh_conformance.unjudged import _show

    return UnreadableField(op, pointer, expected, _show(seen))


def _message(item: object, where: str) -> Why | None:
    """Why *item* is not a typed message, or None."""
    if not isinstance(item, Mapping):
        return where, "a typed message (an object)", item
    if item.get("role") not in ROLES:
        return f"{where}/role", "user or assistant", item.get("role")
    if not isinstance(item.get("text"), str):
        return f"{where}/text", "a string", item.get("text")
    if not _int(item.get("omittedBytes")):
        return f"{where}/omittedBytes", "a non-negative integer", item.get("omittedBytes")
    if not isinstance(item.get("checkpoint"), bool):
        return f"{where}/checkpoint", "a boolean", item.get("checkpoint")
    return None


def _retention(source: object, what: str) -> Why | None:
    """Why *source* is not a typed retention account, or None."""
    if not isinstance(source, Mapping):
        return what, "a typed source (an object)", source
    for name in ("serializedBytes", "omittedMessages"):
        if not _int(source.get(name)):
            return f"{what}/{name}", "a non-negative integer", source.get(name)
    messages = source.get("messages")
    if not isinstance(messages, list):
        return f"{what}/messages", "an array", messages
    for index, item in enumerate(messages):
        why = _message(item, f"{what}/messages/{index}")
        if why is not None:
            return why
    return None


def sources_of(args: Mapping[str, Any], result: object) -> list[dict[str, Any]]:
    """The typed ``sources`` of a prepare result with one context (UnreadableResult if not)."""

    def unreadable(reason: str) -> UnreadableResult:
        return UnreadableResult("prepare", dict(args), result, reason)

    if not isinstance(result, Mapping) or not isinstance(result.get("contexts"), list):
        raise unreadable("no contexts array")
    if len(result["contexts"]) != 1:
        raise unreadable(f"{len(result['contexts'])} contexts where one was prepared")
    sources = result.get("sources")
    if sources is None or sources == []:  # a host of protocol 2: read its rendering (D-520)
        from dsh_conformance.conformance.untyped_sources import sources_account

        return sources_account(args, result)
    if not isinstance(sources, list):
        raise _field("prepare", "/sources", "an array of typed sources", sources)
    for index, source in enumerate(sources):
        why = _retention(source, f"/sources/{index}")
        if why is None and not isinstance(source.get("sessionId"), str):
            why = (f"/sources/{index}/sessionId", "a string", source.get("sessionId"))
        if why is not None:
            raise _field("prepare", *why)
    return [dict(s) for s in sources]


def retained_of(args: Mapping[str, Any], result: object) -> dict[str, Any]:
    """The typed ``source`` of a retention.retain result (UnreadableResult if not)."""
    if not isinstance(result, Mapping):
        raise UnreadableResult("retention.retain", dict(args), result, "not an object")
    source = result.get("source")
    if source is None:  # a host of protocol 2: read its data and stats (D-520)
        from dsh_conformance.conformance.untyped_sources import retained_account

        return retained_account(args, result)
    why = _retention(source, "/source")
    if why is not None:
        raise _field("retention.retain", *why)
    assert isinstance(source, Mapping)
    return dict(source)


def prompt_of(result: Mapping[str, Any]) -> str:
    """The text of the single context's blocks, joined (a host may split its text)."""
    (context,) = result["contexts"]
    blocks = context.get("content") if isinstance(context, Mapping) else None
    texts = [b.get("text") for b in blocks or () if isinstance(b, Mapping)]
    return "".join(t for t in texts if isinstance(t, str))


def context_json(prompt: str) -> tuple[str, Any] | None:
    """ENV-001 read layout-free: (the text above the data, the JSON value) or None.

    The value is the JSON that ends right before the final closing tag (whitespace
    allowed), starting at the earliest ``[`` or ``{`` from which it parses to that end; the
    text above it, less an opening tag, is the warning.  Any field names, nesting, array or
    object, indentation.
    """
    end = prompt.rfind(CLOSE_TAG)
    if end < 0:
        return None
    body = prompt[:end].rstrip()
    decoder = json.JSONDecoder()
    for start, char in enumerate(body):
        if char not in "[{":
            continue
        try:
            value, stop = decoder.raw_decode(body, start)
        except ValueError:
            continue
        if stop == len(body):
            above = body[:start]
            opening = above.rfind(OPEN_TAG)
            if opening >= 0 and above[opening:].rstrip().endswith(">"):
                above = above[:opening]
            return above.strip(), value
    return None


def string_values(value: object, *, keys: bool = False) -> Iterator[str]:
    """Every string value inside *value*, depth first; its object keys too with *keys*."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            yield current
        elif isinstance(current, Mapping):
            if keys:
                stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list):
            stack.extend(current)


def missing_texts(sources: Sequence[Mapping[str, Any]], value: object) -> list[str]:
    """Retained texts of *sources* that occur as no JSON string value of the context."""
    present = set(string_values(value))
    return [m["text"] for s in sources for m in s["messages"] if m["text"] not in present]


def least_serialized_bytes(texts: Sequence[str]) -> int:
    """The fewest bytes any tag-safe JSON holding each of *texts* as a string can take.

    JSON.stringify's escapes are the shortest JSON allows (a lone surrogate must be
    escaped in UTF-8 JSON), and tag safety writes each ``<`` as ``\\u003c`` (SER-006): so a
    source whose serialization holds these texts cannot measure less (D-231).
    """
    return sum(tag_safe_bytes(t) for t in texts)


def expect_within(source: Mapping[str, Any], cap: int, **inputs: object) -> None:
    """RET-001 on the host's measure: its serializedBytes is within the cap; SER-006: it is
    no less than its retained texts take as tag-safe JSON strings (D-231)."""
    size = source["serializedBytes"]
    expect("RET-001", size <= cap, "a source over its cap", cap=cap, size=size, **inputs)
    least = least_serialized_bytes([m["text"] for m in source["messages"]])
    expect(
        "SER-006",
        size >= least,
        "serializedBytes is less than the retained texts take as JSON (D-231)",
        size=size,
        least=least,
        **inputs,
    )


def _common_suffix(a: bytes, b: bytes) -> int:
    return _prefix(a[::-1], b[::-1])


def head_tail_splits(text: str, original: str, omitted: int) -> list[tuple[int, int]]:
    """RET-003 on the typed field: the (fewest, most) head bytes of every reading of *text*
    as a head of *original*, an optional marker of any wording, and a tail of it, with
    ``len(original) - kept == omitted`` in UTF-8 bytes (TextEncoder) -- empty if none.

    The marker (the host's notice, or nothing) sits before the head, between head and
    tail, or after the tail (D-230): the wording and place are the host's.
    """
    data, whole = encoded(text), encoded(original)
    kept = len(whole) - omitted
    marker = len(data) - kept
    if omitted <= 0 or kept < 0 or marker < 0:
        return []
    rests: list[tuple[int, int]] = []
    for rest in {data[:kept], data[marker:]}:  # the marker after the tail / before the head
        rests.append((_prefix(rest, whole), _common_suffix(rest, whole)))
    rests.append((_prefix(data, whole), _common_suffix(data, whole)))  # between
    out = []
    for prefix, suffix in rests:
        low, high = max(0, kept - suffix), min(prefix, kept)
        if low <= high:
            out.append((low, high))
    return out


def keeps_both_ends(splits: Sequence[tuple[int, int]], kept: int) -> bool:
    """Some reading keeps a head and a tail, or the slice is too short to need both (D-36)."""
    if kept < 16:
        return True
    return any(low <= kept - 1 and high >= 1 for low, high in splits)


def is_cut_of(message: Mapping[str, Any], original: str) -> bool:
    """Whether a typed message is *original* whole, or cut with something omitted --
    without judging the cut's exactness (RET-003 does), so an inexact slice is not also
    reported as a lost message."""
    if message["text"] == original:
        return True
    omitted = message["omittedBytes"]
    if omitted <= 0:
        return False
    data, whole = encoded(message["text"]), encoded(original)
    if omitted == len(whole) or head_tail_splits(message["text"], original, omitted):
        return True
    if cut_readings(message["text"], original):  # a count in the text reads it as a cut
        return True
    # kept bytes at either end, or short enough to be a bare marker (D-197)
    return _prefix(data, whole) > 0 or _common_suffix(data, whole) > 0 or len(data) < 80


def same_message(message: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """A typed retained message is the projected *item*, whole or cut."""
    return message["role"] == item["role"] and is_cut_of(message, item["text"])


def kept_of(
    messages: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]] | None:
    """RET-002 (D-198): the projected items the typed messages retain, when they are the
    checkpoints, the newest item and a suffix of the others (each whole or cut); else None."""
    return kept_items(messages, expected, same_message)


def keeps_preserved(
    messages: Sequence[Mapping[str, Any]],
    expected: Sequence[Mapping[str, Any]],
    must: Sequence[bool],
) -> bool:
    """RET-002: the messages are an in-order selection of the projected items (each whole or
    cut) that includes every item flagged in *must* (dynamic programming, no recursion)."""
    n, m = len(expected), len(messages)
    # fits[i][j]: messages[i:] can be matched against expected[j:]
    fits = [[False] * (n + 1) for _ in range(m + 1)]
    fits[m][n] = True
    for j in range(n - 1, -1, -1):
        for i in range(m, -1, -1):
            ok = not must[j] and fits[i][j + 1]
            if not ok and i < m and same_message(messages[i], expected[j]):
                ok = fits[i + 1][j + 1]
            fits[i][j] = ok
    return fits[0][0]
