"""Read a run of pipelined replies in one pass, when every one is its request's answer.

The subprocess transport reads the replies to a pipelined batch in request order
(docs/protocol.md).  Most are the plain answer ``{"id": N, "result": ...}`` to the
request awaited, and the general reading (``wire.decode`` and the reply checks, line by
line) spends more on its Python steps than on the JSON.  ``results`` reads a run of
reply lines with one orjson call per line and checks all of them together with C-level
passes (a run holding an error reply, one reply at a time: D-504); anything else (a
line orjson refuses, a reply to another id, a float id, a reply with both or neither of
result and error, a malformed error, a value orjson may have read inexactly) makes it
answer ``None``, and the transport reads the same lines the general way, which words the
fault and blames it on the run (D-484).  What it returns is what the general reading
returns for the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from typing import Any, Final

import orjson

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.model import jsstr

_INT_ONLY: Final = {int}
_contains = dict.__contains__
_get = dict.get


def results(lines: Sequence[bytes | tuple[str, bytes]], ids: Sequence[int]) -> list[Any] | None:
    """What ``call_many`` returns for *lines*, the replies to the requests numbered *ids*
    (one each, in order): each result, or the ``ImplementationError`` an error reply
    answers with; or ``None`` unless each is a JSON object ``wire.decode`` reads alike
    whose ``id`` is the integer awaited, with exactly one of ``result`` and ``error``, an
    error being ``{code, message}`` strings (``ReplyFaults._check_reply``'s tests).

    Exactness: orjson refuses lone-surrogate escapes and reads an integer beyond 64 bits
    as a float; ``jsstr.quick_plain`` rules out floats (of the results, or of the whole
    replies in a run with an error), so what orjson read is the exact reading
    (``wire.decode``'s own test).  The ids are compared as a list and their types as a
    set, so ``true`` or ``1.0`` for 1 is no match here."""
    try:
        # A stdout event that is not a line (a tuple: EOF, an over-long line) is no
        # bytes for orjson; a reply that is no object has no dict.get.
        replies = list(map(orjson.loads, lines))  # type: ignore[arg-type]
        got = list(map(_get, replies, repeat("id")))
    except (orjson.JSONDecodeError, TypeError):
        return None
    if got != ids or set(map(type, got)) != _INT_ONLY:
        return None
    if all(map(_contains, replies, repeat("result"))):
        if any(map(_contains, replies, repeat("error"))):
            return None
        out = list(map(_get, replies, repeat("result")))
        return out if jsstr.quick_plain(out) else None
    return _with_errors(replies)


def _with_errors(replies: list[dict[str, Any]]) -> list[Any] | None:
    """``results`` of a run holding an error reply (D-504): the general reading's answer
    for each (``Exchange._reply``: the result, or ``ImplementationError`` with the
    message made printable), or ``None`` where it would find a fault or read otherwise."""
    if not jsstr.quick_plain(replies):
        return None
    out: list[Any] = []
    for reply in replies:
        if "result" in reply:
            if "error" in reply:
                return None
            out.append(reply["result"])
            continue
        error = reply.get("error")
        if type(error) is not dict:
            return None
        code, message = error.get("code"), error.get("message")
        if type(code) is not str or type(message) is not str:
            return None
        out.append(ImplementationError(code, wire.printable(message)))
    return out
