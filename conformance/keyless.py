"""The seed's keyless TUI scenario (V-21; research note B §6.1), as data.

The source session's surface replaces old user/assistant history with a compact checkpoint
and keeps one recent question; the target submits a mention of it.  The prefix context
comes from the implementation's own ``prepare`` when it declares that capability, else
from the reference model's (the agent under test only has to place it).
"""

from __future__ import annotations

from typing import Any, Final

from dsh_conformance.adapters.client import Implementation

SOURCE_ID: Final = "source-session"
TARGET_ID: Final = "target-session"
CWD: Final = "/workspace/project"
#: ``@[Source session](dsh-session:…)`` for the id "source-session".
PROMPT: Final = "Use @[Source session](dsh-session:InNvdXJjZS1zZXNzaW9uIg)"


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


def prepare_args() -> dict[str, Any]:
    return {
        "target": {"id": TARGET_ID, "cwd": CWD},
        "content": _text(PROMPT),
        "references": [{"sessionId": SOURCE_ID, "label": "Source session"}],
        "sessions": {SOURCE_ID: source_session()},
    }


def keyless_contexts(impl: Implementation) -> tuple[list[Any], list[Any]]:
    """``(content, contexts)`` to send: prepared by *impl* if it can, else by the reference."""
    if impl.supports("prepare"):
        prepared = impl.call("prepare", **prepare_args())
    else:
        from dsh_conformance.adapters.reference import ReferenceAdapter

        prepared = ReferenceAdapter().call("prepare", prepare_args())
    return prepared["content"], prepared["contexts"]
