"""One tool call of a batch: run it (or the pre-execute seam's outcome), or abort it.

Every call is written with its paired result, so a log never holds a dangling call,
whether the call ran, was denied by a gate (side sessions, SIDE-028) or was aborted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.model.agent_core import AgentCore
from dsh_conformance.model.turn import ABORTED_BEFORE_DISPATCH, ToolOutcome, Turn


class ToolCalls(AgentCore):
    """The tool-call half of a step: calls and their paired results."""

    def pre_execute(self, name: str, call: Mapping[str, Any]) -> ToolOutcome | None:
        """The tools pre-execute seam: return an outcome to use instead of running *name*.

        ``None`` (the default) runs the tool.  Side sessions' deny gate (SIDE-028) answers
        here, so the call and its paired result are written the same way either way.
        """
        return None

    def _run_call(self, turn: Turn, call: Mapping[str, Any]) -> None:
        name = str(call["name"])
        outcome = self.pre_execute(name, call)
        if outcome is None:
            tool = self.options.tool(name)
            if tool is None:
                outcome = ToolOutcome(
                    content=({"type": "text", "text": f'Error: unknown tool "{name}"'},),
                    is_error=True,
                    error={"name": "ToolNotFoundError", "code": "UNKNOWN_TOOL"},
                )
            else:
                outcome = ToolOutcome(content=tool.result, is_error=tool.is_error)
        self._record_call(turn, call, outcome)

    def _abort_call(self, turn: Turn, call: Mapping[str, Any]) -> None:
        self._record_call(
            turn,
            call,
            ToolOutcome(
                content=({"type": "text", "text": "Error: tool call aborted before dispatch"},),
                is_error=True,
                error={"name": "AbortError", "code": ABORTED_BEFORE_DISPATCH},
            ),
        )

    def _record_call(self, turn: Turn, call: Mapping[str, Any], outcome: ToolOutcome) -> None:
        """Append a ``tool/call`` and its paired ``tool/result`` (calls never dangle)."""
        call_seq = self._append(
            "tool/call",
            {
                "turn": turn.number,
                "step": turn.step,
                "callId": call["id"],
                "name": call["name"],
                "arguments": call["arguments"],
            },
        ).seq
        data: dict[str, Any] = {
            "turn": turn.number,
            "step": turn.step,
            "callId": call["id"],
            "content": outcome.content,
            "isError": outcome.is_error,
        }
        if outcome.error is not None:
            data["error"] = outcome.error
        self.log.append("tool/result", data, source_event_seqs=[call_seq])

    def _end_batch(self) -> None:
        self._tool_batch = False
        deferred, self._deferred = self._deferred, []
        for context in deferred:
            self._append("context/message", context)
