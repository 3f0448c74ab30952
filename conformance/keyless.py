"""The seed's keyless TUI scenario (V-21; research note B §6.1), as data.

The source session's surface replaces old user/assistant history with a compact checkpoint
and keeps one recent question; the target submits a mention of it.  The host flow is
composed end to end (issue 11 item 7): ``mention.parse`` turns the Markdown prompt into
readable text and references, ``prepare`` snapshots the references, and ``agent.send``
carries the readable text with the prepared contexts, so the model and ``displayContent``
see ``Use @Source session``, never the raw mention.  Each step uses the implementation's
own operation when it declares the capability, else the reference model's (the agent under
test then only has to place the contexts).
"""

from __future__ import annotations

from typing import Any, Final

from dsh_conformance.adapters.client import Implementation

SOURCE_ID: Final = "source-session"
TARGET_ID: Final = "target-session"
CWD: Final = "/workspace/project"
#: ``@[Source session](dsh-session:…)`` for the id "source-session".
PROMPT: Final = "Use @[Source session](dsh-session:InNvdXJjZS1zZXNzaW9uIg)"
#: What a host shows and sends once the mention is parsed (MENTION-003).
READABLE: Final = "Use @Source session"


def _text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def source_session() -> dict[str, Any]:
    """Shadowed user + assistant, a compact checkpoint replacing both, a retained question."""
    user = {"kind": "user"}
    return {
        "header": {"id": SOURCE_ID, "cwd": CWD},
        "events": [
            {
                "type": "turn/start",
                "seq": 0,
                "time": 0,
                "data": {"turn": 1, "trigger": {"kind": "message", "source": user}},
            },
            {
                "type": "user/message",
                "seq": 1,
                "time": 0,
                "data": {"content": _text("SHADOWED OLD USER"), "source": user},
                "surfaceOp": "append",
            },
            {
                "type": "assistant/message",
                "seq": 2,
                "time": 0,
                "data": {
                    "turn": 1,
                    "step": 1,
                    "content": _text("SHADOWED OLD ASSISTANT"),
                    "provenance": {"provider": "mock", "model": "mock"},
                },
                "surfaceOp": "append",
            },
            {
                "type": "turn/end",
                "seq": 3,
                "time": 0,
                "data": {"turn": 1, "reason": {"kind": "completed"}},
            },
            {
                "type": "user/message",
                "seq": 4,
                "time": 0,
                "data": {
                    "content": _text("<compacted-summary>Retained checkpoint.</compacted-summary>"),
                    "source": {"kind": "plugin", "plugin": "compact"},
                },
                "surfaceOp": {"op": "replace", "start": 1, "end": 2},
                "sourceEventSeqs": [1, 2],
            },
            {
                "type": "user/message",
                "seq": 5,
                "time": 0,
                "data": {"content": _text("Recent retained question."), "source": user},
                "surfaceOp": "append",
            },
        ],
    }


def prepare_args(
    text: str = READABLE, references: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """``prepare`` arguments for the parsed prompt *text* and its *references*."""
    if references is None:
        references = [{"sessionId": SOURCE_ID, "label": "Source session"}]
    return {
        "target": {"id": TARGET_ID, "cwd": CWD},
        "content": _text(text),
        "references": references,
        "sessions": {SOURCE_ID: source_session()},
    }


def _by(impl: Implementation, capability: str, op: str, args: dict[str, Any]) -> Any:
    """*op* on *impl* when it declares *capability*, else on the reference model."""
    if impl.supports(capability):
        return impl.call(op, **args)
    from dsh_conformance.adapters.reference import ReferenceAdapter

    return ReferenceAdapter().call(op, args)


def keyless_contexts(impl: Implementation) -> tuple[list[Any], list[Any]]:
    """``(content, contexts)`` to send: mention parse, then prepare, as a host composes them."""
    parsed = _by(impl, "mention", "mention.parse", {"text": PROMPT})
    prepared = _by(impl, "prepare", "prepare", prepare_args(parsed["text"], parsed["references"]))
    return prepared["content"], prepared["contexts"]
