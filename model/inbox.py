"""Inbox records: the unit of message ownership (seed 000 "Message ownership").

``send()`` and ``steer()`` snapshot content, resolved source and contexts *together* into
one deeply frozen, lossless-JSON record (INBOX-001).  The record is what is queued, what
``agent/queued`` announces, what prompt-submit sees and what the log is written from, so a
caller mutating its own objects afterwards can never reach the agent (INBOX-003, V-15).

Lossless JSON (D-60): ``None``, booleans, canonical strings, safe integers, finite floats
other than ``-0.0``, arrays (``list``/``tuple``) and objects with string keys
(``dict``/``Mapping``).  Everything else -- NaN, ±Infinity, ``-0.0``, integers outside the
safe range, ``undefined``, non-string keys, cycles, sets, bytes, functions, any other
object -- is rejected with ``AGENT_INVALID_MESSAGE`` before anything is queued or
announced (INBOX-002).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, thaw
from dsh_conformance.model.session import MAX_SAFE_INTEGER

#: The default source: "attests direct human input" (seed-era ``resolveSource``).
USER_SOURCE: Final = FrozenDict({"kind": "user"})


def _reject(what: str, path: str) -> DshError:
    return DshError(
        ErrorCode.AGENT_INVALID_MESSAGE,
        f"agent message {what} at {path or '$'} is not lossless JSON",
        hint="content, source, contexts and meta must be losslessly JSON-serializable",
    )


def snapshot(value: object, path: str = "") -> Any:
    """A deep frozen copy of *value* if it is lossless JSON, else ``AGENT_INVALID_MESSAGE``.

    One walk validates and copies (D-60); strings are canonicalized (D-1).  Cycles are
    detected on the ancestor chain, so a shared (acyclic) sub-object is accepted.
    """
    return _snap(value, path, set())


def _snap(value: object, path: str, active: set[int]) -> Any:
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return jsstr.canonical(value)
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise _reject("an integer outside the safe range", path)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _reject("a non-finite number", path)
        if value == 0.0 and math.copysign(1.0, value) < 0:
            raise _reject("negative zero", path)
        return value
    if isinstance(value, Mapping | list | tuple):
        if id(value) in active:
            raise _reject("a cycle", path)
        active.add(id(value))
        try:
            if isinstance(value, Mapping):
                out: dict[str, Any] = {}
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise _reject(f"a non-string key {key!r}", path)
                    out[jsstr.canonical(key)] = _snap(item, f"{path}.{key}", active)
                return FrozenDict(out)
            return tuple(_snap(item, f"{path}[{i}]", active) for i, item in enumerate(value))
        finally:
            active.discard(id(value))
    raise _reject(f"a value of type {type(value).__name__}", path)


@frozen
class InboxRecord:
    """One accepted message: content, resolved source and contexts, all deeply frozen."""

    content: Any
    source: Any
    contexts: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "content": thaw(self.content),
            "source": thaw(self.source),
            "contexts": thaw(self.contexts),
        }


def accept(
    content: object, source: object | None = None, contexts: Sequence[object] | None = None
) -> InboxRecord:
    """INBOX-001/002: snapshot ``{content, source, contexts}`` as one record, atomically.

    ``source`` defaults to ``{kind: "user"}`` and ``contexts`` to ``[]``; shape is not
    validated, only JSON-ness (as upstream at e819a586b0, D-60).
    """
    whole = snapshot(
        {
            "content": content,
            "source": USER_SOURCE if source is None else source,
            "contexts": [] if contexts is None else contexts,
        }
    )
    if not isinstance(whole["contexts"], tuple):
        raise _reject("contexts that are not an array", "$.contexts")
    return InboxRecord(whole["content"], whole["source"], whole["contexts"])
