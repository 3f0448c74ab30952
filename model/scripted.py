"""A keyless scripted model: deterministic responses, so turns have steps and tool batches.

Each step consumes one scripted response (then the options' fallback).  A response is
``{"text": T}`` (one text block), ``{"toolCalls": [{name, arguments?, id?}], "text"?}``
(optional text, then tool-call blocks: the step opens a tool batch and the turn continues),
or ``{"error": MESSAGE, "code"?}`` (the model request fails); ``"hold": true`` on any of
them holds the reply open after the request is captured until the driver's ``stream``
micro-step, and ``{"hang": true}`` is a reply that never finishes by itself (only an
interrupt ends its turn).  ``"partial": T`` beside ``hang`` or ``error`` streams T as the
start of a text block that never ends (chunks only, no assistant message) before the reply
hangs or fails: an unfinished stream.  The stream is written in the
seed-era chunk vocabulary (``block-start``/``text-delta``/``tool-call-delta``/``block-end``/
``finish``) so logs look like upstream's (D-71).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.inbox import snapshot


def _bad(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, message)


@frozen
class ModelResponse:
    """One step's outcome: chunks, assembled content, tool calls, or a failure."""

    chunks: tuple[FrozenDict, ...]
    content: tuple[FrozenDict, ...]
    tool_calls: tuple[FrozenDict, ...]
    error: tuple[str, str | None] | None = None


def validate_response(value: object) -> FrozenDict:
    """Freeze and check one response spec (INVALID_ARGUMENT on a bad shape)."""
    spec = snapshot(value)
    if not isinstance(spec, Mapping):
        raise _bad("a scripted response must be an object")
    if "hold" in spec and not isinstance(spec["hold"], bool):
        raise _bad("hold must be a boolean")
    if "partial" in spec and (
        not isinstance(spec["partial"], str) or ("hang" not in spec and "error" not in spec)
    ):
        raise _bad("partial is a string, beside hang or error")
    if "hang" in spec:
        if spec["hang"] is not True or set(spec) - {"hang", "hold", "partial"}:
            raise _bad("a hanging response is exactly {hang: true, partial?}")
        return FrozenDict(spec)
    if "error" in spec:
        if not isinstance(spec["error"], str):
            raise _bad("a scripted error is a string message")
        return FrozenDict(spec)
    if "text" in spec and not isinstance(spec["text"], str):
        raise _bad("scripted text must be a string")
    calls = spec.get("toolCalls", ())
    if not isinstance(calls, tuple) or not all(
        isinstance(c, Mapping) and isinstance(c.get("name"), str) for c in calls
    ):
        raise _bad("toolCalls is an array of {name, arguments?, id?}")
    if "text" not in spec and not calls:
        raise _bad("a scripted response needs text, toolCalls or error")
    return FrozenDict(spec)


def partial_chunks(spec: Mapping[str, Any]) -> tuple[FrozenDict, ...]:
    """The chunks of an unfinished stream: a text block opened, *partial* streamed, no end."""
    if "partial" not in spec:
        return ()
    chunks = [
        {"type": "block-start", "index": 0, "blockType": "text"},
        {"type": "text-delta", "index": 0, "text": spec["partial"]},
    ]
    return tuple(freeze(c) for c in chunks)


def render(spec: Mapping[str, Any], turn: int, step: int) -> ModelResponse:
    """The stream and assembled message of *spec* for (turn, step); ids are deterministic."""
    if "error" in spec:
        code = spec.get("code")
        return ModelResponse((), (), (), (str(spec["error"]), None if code is None else str(code)))
    chunks: list[dict[str, Any]] = []
    content: list[dict[str, Any]] = []
    index = 0
    if "text" in spec:
        block = {"type": "text", "text": spec["text"]}
        chunks += [
            {"type": "block-start", "index": index, "blockType": "text"},
            {"type": "text-delta", "index": index, "text": spec["text"]},
            {"type": "block-end", "index": index, "block": block},
        ]
        content.append(block)
        index += 1
    calls: list[dict[str, Any]] = []
    for n, call in enumerate(spec.get("toolCalls", ())):
        arguments = call.get("arguments", "{}")
        if not isinstance(arguments, str):
            arguments = jsstr.stringify(thaw(arguments))
        call_id = str(call.get("id", f"call-{turn}-{step}-{n + 1}"))
        block = {"type": "tool-call", "id": call_id, "name": call["name"], "arguments": arguments}
        chunks += [
            {"type": "block-start", "index": index, "blockType": "tool-call"},
            {
                "type": "tool-call-delta",
                "index": index,
                "id": call_id,
                "name": call["name"],
                "argumentsDelta": arguments,
            },
            {"type": "block-end", "index": index, "block": block},
        ]
        content.append(block)
        calls.append(block)
        index += 1
    chunks.append({"type": "finish", "reason": {"kind": "tool-calls" if calls else "stop"}})
    return ModelResponse(
        tuple(freeze(c) for c in chunks),
        tuple(freeze(c) for c in content),
        tuple(map(freeze, calls)),
    )


class ScriptedModel:
    """The response queue of one agent (state: the seed's model has none; a script does)."""

    def __init__(self, fallback: Any) -> None:
        self._script: deque[FrozenDict] = deque()
        self._fallback: FrozenDict | None = (
            None if fallback is None else validate_response(fallback)
        )

    def extend(self, responses: Iterable[object]) -> None:
        checked = [validate_response(r) for r in responses]  # all-or-nothing
        self._script.extend(checked)

    def pending(self) -> list[dict[str, Any]]:
        return [thaw(r) for r in self._script]

    def next(self) -> FrozenDict:
        if self._script:
            return self._script.popleft()
        if self._fallback is None:
            return FrozenDict(
                {
                    "error": "the model script is exhausted",
                    "code": str(ErrorCode.AGENT_SCRIPT_EXHAUSTED),
                }
            )
        return self._fallback
