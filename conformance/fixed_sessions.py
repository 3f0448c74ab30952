"""Hand-built source logs for the explicit examples of the session properties (D-400).

A property's generated logs find a defect only when a draw happens to hit it, so a seed
MUST's verdict would depend on the seed.  Each log here is written out once, with what the
seed says its projection keeps (``expected``) and what it must never show (``hidden``),
stated by hand rather than computed by model code; the properties run them as
``@example``s before they generate anything.  Each log's docstring at its use names the
defect it pins and why a conforming host passes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dsh_conformance.conformance.strategies_sessions import (
    COMPACT,
    USER,
    SessionCase,
    _Builder,
    text_block,
)

#: One entry of a hand-built log: it appends its event(s) to the builder.
Entry = Callable[[_Builder], None]

#: A plugin's injected context, which projection excludes (PROJ-004).
WORKSPACE: Final = {"kind": "plugin", "plugin": "ws"}


def _item(role: str, text: str, checkpoint: bool = False) -> dict[str, Any]:
    return {"role": role, "text": text, "checkpoint": checkpoint}


def _message(type_: str, data: dict[str, Any], kept: dict[str, Any] | None) -> Entry:
    """An appended message, projected as *kept* or, when None, never (its text hidden)."""

    def add(b: _Builder) -> None:
        b.append(type_, data, kept)
        if kept is None:
            b.hidden.extend(block["text"] for block in data["content"])

    return add


def user(text: str) -> Entry:
    """A direct-user message: kept (PROJ-001)."""
    data = {"content": [text_block(text)], "source": USER}
    return _message("user/message", data, _item("user", text))


def assistant(text: str, reasoning: str) -> Entry:
    """A completed assistant message: its text kept, its *reasoning* excluded."""

    content = [{"type": "reasoning", "text": reasoning}, text_block(text)]
    kept = _item("assistant", text)
    add = _message("assistant/message", {"turn": 0, "step": 0, "content": content}, kept)

    def with_reasoning(b: _Builder) -> None:
        add(b)
        b.hidden.append(reasoning)

    return with_reasoning


def checkpoint(text: str) -> Entry:
    """An appended checkpoint: a user message with the canonical compact source (D-30)."""
    data = {"content": [text_block(text)], "source": COMPACT}
    return _message("user/message", data, _item("user", text, checkpoint=True))


def context(text: str) -> Entry:
    """An injected context/message: excluded (PROJ-004)."""
    return _message("context/message", {"content": [text_block(text)], "source": WORKSPACE}, None)


def plugin_steering(text: str, source: dict[str, Any]) -> Entry:
    """A steering message from a plugin *source*: not projected (D-30), its text hidden."""
    data = {"turn": 0, "content": [text_block(text)], "source": source}
    return _message("steering/message", data, None)


def user_event(text: str) -> dict[str, Any]:
    """A direct-user message event on its own, for a mutation to append (its seq is the
    store's to assign, as in the generated mutations)."""
    data = {"content": [text_block(text)], "source": USER}
    return {"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append", "data": data}


def log(sid: str, *entries: Entry, cwd: str | None = None) -> SessionCase:
    """The log of *entries* in order (every event appended), with its expected projection."""
    header: dict[str, Any] = {"version": 0, "id": sid, "createdAt": 1}
    if cwd is not None:
        header["cwd"] = cwd
    builder = _Builder(header)
    for entry in entries:
        entry(builder)
    return builder.case()
