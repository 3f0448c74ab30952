"""Allowed differences for side sessions: implementations that differ only where seed 004 allows.

Each wraps the reference model and rewords one text the note leaves open, consistently at
the adapter boundary (every string a result carries is translated out, every string an
argument carries is translated back), so the implementation behaves as if it had been
written with that wording.  Each must pass every seed requirement and fail only profile
ids (tests/test_allowed_agentside.py).  Selectable as ``python:allowed_agentside:<factory>``
with ``tests/`` on the path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from fauxmplementations import _Broken

from dsh_conformance.model.side_framing import FRAMING_TEXT
from dsh_conformance.model.side_merge import HANDBACK_HEADING

#: Says what the seed asks (explain; do not mutate; do not continue the task) in other words.
REWORDED_FRAMING = (
    "## Side conversation\n"
    "\n"
    "You are an advisor in a side conversation branched from the discussion above. "
    "Answer the user's questions and explain what happened. Never change files or any "
    "other state, and never carry on with the task itself; the main conversation goes "
    "on by its own."
)

#: Another heading, shorter (14 UTF-8 bytes, the reference's has 26): no seed check may
#: depend on the heading's length (issue 36); what is merged stays within the cap.
REWORDED_HEADING = "## Side note\n\n"

_REQUEST = re.compile(
    r"Write a handback note for the main session: the conclusions of this side session "
    r"that the main session should know, in at most (\d+) UTF-8 bytes\. "
    r"Reply with the note only\."
)
_REWORDED_REQUEST = re.compile(
    r"Summarize what this side conversation concluded, for the main conversation\. "
    r"Keep it under (\d+) bytes \(UTF-8\) and send only the summary\."
)


def _reworded_request(limit: str) -> str:
    return (
        "Summarize what this side conversation concluded, for the main conversation. "
        f"Keep it under {limit} bytes (UTF-8) and send only the summary."
    )


def _original_request(limit: str) -> str:
    return (
        "Write a handback note for the main session: the conclusions of this side session "
        f"that the main session should know, in at most {limit} UTF-8 bytes. "
        "Reply with the note only."
    )


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """*value* with *fn* applied to every string value (keys kept)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    if isinstance(value, Mapping):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    return value


class _Reworded(_Broken):
    """The reference model seen through a pair of string translations."""

    name = "reworded"
    kind = "allowed"

    def outward(self, text: str) -> str:
        return text

    def inward(self, text: str) -> str:
        return text

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        result = self.reference.call(op, _map_strings(dict(args), self.inward))
        return _map_strings(result, self.outward)


class RewordedFraming(_Reworded):
    """Another advisor framing text with the same meaning (SIDE-007 allows it; SIDE-053 pins)."""

    name = "reworded side-session framing"

    def outward(self, text: str) -> str:
        return REWORDED_FRAMING if text == FRAMING_TEXT else text

    def inward(self, text: str) -> str:
        return FRAMING_TEXT if text == REWORDED_FRAMING else text


class RewordedHandback(_Reworded):
    """Another handback heading and handback request (SIDE-009 allows; SIDE-056/058 pin)."""

    name = "reworded handback heading and request"

    def outward(self, text: str) -> str:
        if text.startswith(HANDBACK_HEADING):
            text = REWORDED_HEADING + text[len(HANDBACK_HEADING) :]
        return _REQUEST.sub(lambda m: _reworded_request(m.group(1)), text)

    def inward(self, text: str) -> str:
        if text.startswith(REWORDED_HEADING):
            text = HANDBACK_HEADING + text[len(REWORDED_HEADING) :]
        return _REWORDED_REQUEST.sub(lambda m: _original_request(m.group(1)), text)


def _lean(message: Any) -> Any:
    """A request message without the optional bytes: a tool result's ``isError: false``
    and an assistant message's ``provenance``."""
    if not isinstance(message, Mapping):
        return message
    out = {k: v for k, v in message.items() if k != "provenance"}
    out["content"] = [
        {k: v for k, v in b.items() if not (k == "isError" and v is False)}
        if isinstance(b, Mapping) and b.get("type") == "tool-result"
        else b
        for b in message.get("content") or []
    ]
    return out


class LeanRequests(_Broken):
    """Captured requests leave out what neither note nor protocol doc fixes: a tool
    result's ``isError: false`` and an assistant message's ``provenance`` (D-257).
    Profile: SIDE-090 (the reference's byte replay)."""

    name = "requests without optional fields"
    kind = "allowed"

    def op_agent_requests(self, args: Mapping[str, Any]) -> Any:
        requests = self.reference.call("agent.requests", args)
        return [{**r, "messages": [_lean(m) for m in r["messages"]]} for r in requests]


def lean_requests() -> LeanRequests:
    return LeanRequests()


def reworded_framing() -> RewordedFraming:
    return RewordedFraming()


def reworded_handback() -> RewordedHandback:
    return RewordedHandback()
