"""A rendered context's JSON, read with the span of every value and split per source.

A prompt renders its context as JSON in a layout the note does not fix (D-520): the
untyped reading (conformance/untyped_sources.py) finds, in any layout, the members that
each hold one referenced session's id, and where each starts and ends, so their bytes can
be counted.  The standard library's decoder reads each scalar; this module only walks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import permutations
from typing import Any, Final

from attrs import frozen

_WS: Final = " \t\n\r"


@frozen
class Node:
    """A JSON value of the rendering, where it starts and ends, and its members."""

    value: Any
    start: int
    end: int
    members: tuple[tuple[object, Node], ...] = ()


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _WS:
        at += 1
    return at


def parse(text: str, at: int = 0) -> Node:
    """The JSON value at *at* with its span and its members' (ValueError if none)."""
    at = _skip(text, at)
    decoder = json.JSONDecoder()
    if at < len(text) and text[at] in "[{":
        close = "]" if text[at] == "[" else "}"
        members: list[tuple[object, Node]] = []
        pos = _skip(text, at + 1)
        while pos < len(text) and text[pos] != close:
            key: object = len(members)
            if close == "}":
                key, pos = decoder.raw_decode(text, pos)
                pos = _skip(text, pos)
                if text[pos : pos + 1] != ":":
                    raise ValueError("expected ':'")
                pos += 1
            child = parse(text, pos)
            members.append((key, child))
            pos = _skip(text, child.end)
            if text[pos : pos + 1] == ",":
                pos = _skip(text, pos + 1)
        if pos >= len(text):
            raise ValueError("unterminated container")
        value: Any = (
            [m.value for _, m in members] if close == "]" else {k: m.value for k, m in members}
        )
        return Node(value, at, pos + 1, tuple(members))
    value, end = decoder.raw_decode(text, at)
    return Node(value, at, end)


def strings(node: Node, keys: bool = False) -> Iterator[str]:
    """The string values under *node* in document order (object keys too with *keys*)."""
    if isinstance(node.value, str):
        yield node.value
        return
    for key, member in node.members:
        if keys and isinstance(key, str):
            yield key
        yield from strings(member, keys)


def _containers(root: Node) -> Iterator[Node]:
    """Every array and object, outermost first."""
    queue = [root]
    while queue:
        node = queue.pop(0)
        if node.members:
            yield node
        queue.extend(m for _, m in node.members)


def members_of(
    root: Node, ids: Sequence[str], recorded: Sequence[str] = ()
) -> list[tuple[str, Node]] | None:
    """One member per distinct id, in rendering order: the outermost array or object whose
    members can each be given a distinct id they hold (as a string value, or as their
    key); for one source, the whole value when no container splits it.  When several ways
    remain (a label spelling another source's id), the order the host *recorded* decides;
    None when nothing does."""
    wanted = list(dict.fromkeys(ids))
    for node in _containers(root):
        if len(node.members) != len(wanted):
            continue
        held = []
        for key, member in node.members:
            here = {s for s in strings(member, keys=True) if s in wanted}
            held.append({key} if isinstance(key, str) and key in wanted else here)
        # the one way to give each member a distinct id it holds (a label may spell another)
        ways = [
            p for p in permutations(wanted) if all(sid in h for sid, h in zip(p, held, strict=True))
        ]
        if len(ways) > 1:
            ways = [w for w in ways if list(w) == list(recorded)]
            if len(ways) != 1:
                return None
        if len(ways) == 1:
            return [(sid, member) for sid, (_, member) in zip(ways[0], node.members, strict=True)]
    if len(wanted) == 1 and any(s in wanted for s in strings(root, keys=True)):
        return [(wanted[0], root)]
    return None
