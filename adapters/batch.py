"""Read a run of pipelined replies in one pass, when every one is its request's result.

The subprocess transport reads the replies to a pipelined batch in request order
(docs/protocol.md).  Most are the plain answer ``{"id": N, "result": ...}`` to the
request awaited, and the general reading (``wire.decode`` and the reply checks, line by
line) spends more on its Python steps than on the JSON.  ``results`` reads a run of
reply lines with one orjson call per line and checks all of them together with C-level
passes; anything else (a line orjson refuses, a reply to another id, a float id, an
error reply, a reply with both or neither of result and error, a result orjson may have
read inexactly) makes it answer ``None``, and the transport reads the same lines the
general way, which words the fault and blames it on the run (D-484).  What it returns
is what the general reading returns for the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any, Final

import orjson

from dsh_conformance.model import jsstr

_INT_ONLY: Final = {int}
_contains = dict.__contains__
_get = dict.get


def results(lines: Sequence[bytes | tuple[str, bytes]], ids: Sequence[int]) -> list[Any] | None:
    """The results of *lines*, the replies to the requests numbered *ids* (one each, in
    order), or ``None`` unless each is a JSON object ``wire.decode`` reads alike whose
    ``id`` is the integer awaited, with a ``result`` and no ``error``.

    Exactness: orjson refuses lone-surrogate escapes and reads an integer beyond 64 bits
    as a float; ``jsstr.quick_plain`` of the results rules out floats, so what orjson read
    is the exact reading (``wire.decode``'s own test).  The ids are compared as a list
    and their types as a set, so ``true`` or ``1.0`` for 1 is no match here."""
    try:
        # A stdout event that is not a line (a tuple: EOF, an over-long line) is no
        # bytes for orjson; a reply that is no object has no dict.get.
        replies = list(map(orjson.loads, lines))  # type: ignore[arg-type]
        got = list(map(_get, replies, repeat("id")))
    except (orjson.JSONDecodeError, TypeError):
        return None
    if (
        got != ids
        or set(map(type, got)) != _INT_ONLY
        or not all(map(_contains, replies, repeat("result")))
        or any(map(_contains, replies, repeat("error")))
    ):
        return None
    out = list(map(_get, replies, repeat("result")))
    return out if jsstr.quick_plain(out) else None
