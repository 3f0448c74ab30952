"""The stepped driver: upstream's ``runLoop``/``runTurn`` as explicit micro-steps (D-61).

Each micro-step is what upstream runs between two ``await`` points (model/agent.py lists
them), so a test can put a caller operation at a chosen point.  ``step`` dispatches on
the program counter (model/turn.py ``Phase``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.prompt_submit import (
    Allow,
    Block,
    Decision,
    ListenerFailure,
    run_waterfall,
)
from dsh_conformance.model.scripted import partial_chunks, render
from dsh_conformance.model.tool_calls import ToolCalls
from dsh_conformance.model.turn import Phase, Turn, last_turn_number


class Driver(ToolCalls):
    """The micro-steps of an agent's loop, over the state of model/agent_core.py."""

    def step(self) -> str | None:
        """Run one driver micro-step; returns its name, or None when there is nothing to do."""
        phase = self.phase
        if phase is Phase.DISPOSED:
            return None
        handler = {
            Phase.HEAD: self._claim,
            Phase.SUBMIT: self._submit,
            Phase.MODEL: self._model,
            Phase.STREAM: self._stream,
            Phase.TOOL: self._tool,
            Phase.POST_STEP: self._post_step,
            Phase.TURN_STOP: self._turn_stop,
            Phase.FLUSH: self._flush,
        }[phase]
        return handler()

    def run_until_idle(self, max_steps: int = 100_000) -> int:
        """Step until quiescent; returns the number of micro-steps run."""
        count = 0
        while self.step() is not None:
            count += 1
            if count >= max_steps:
                raise DshError(
                    ErrorCode.INVALID_ARGUMENT, f"agent did not settle in {max_steps} steps"
                )
        return count

    # --- micro-steps ------------------------------------------------------------------------

    def _claim(self) -> str | None:
        if self._pre_run_cancelled:
            self._pre_run_cancelled = False
            if not self.queued:
                self._set_status("idle")
                return "settle"
        if not self.queued:
            return None
        self._set_status("running")
        self._owner = True
        self._abort = None
        self._terminal_stopped = False
        number = last_turn_number(self.log.events) + 1
        record = self.queued.popleft()
        self._turn = Turn(number, record)
        self._append(
            "turn/start", {"turn": number, "trigger": {"kind": "message", "source": record.source}}
        )
        self.phase = Phase.SUBMIT
        return "claim"

    def _submit(self) -> str:
        turn = self._require_turn()
        record = turn.record
        self._submissions.append(
            {"turn": turn.number, "content": thaw(record.content), "source": thaw(record.source)}
        )
        default = Allow(None, record.contexts or None)
        try:
            decision: Decision = run_waterfall(
                tuple(x for x in self.listeners if x.event == "prompt-submit"),
                default,
                self._invoked,
            )
        except ListenerFailure as failure:
            if self._abort is None:
                self._fail(turn, failure.message, failure.code)
            self._interrupt_or_close(turn)
            return "submit"
        if self._abort is not None:
            self._interrupt(turn)
            return "submit"
        if isinstance(decision, Block):
            self._append(
                "prompt/blocked",
                {"content": record.content, "source": record.source, "reason": decision.reason},
            )
            turn.reason = FrozenDict({"kind": "rejected", "reason": decision.reason})
            self._close_turn(turn)
            return "submit"
        content = record.content if decision.content is None else decision.content
        prepared = self.place_prompt(content, record.source, decision.additional_contexts or ())
        self._append("user/message", prepared.data)
        for context in prepared.separate:
            self._append("context/message", context)
        self._begin_step(turn)
        return "submit"

    def _model(self) -> str:
        turn = self._require_turn()
        if self._abort is not None:
            self._interrupt(turn)
            return "model"
        boundary = self._boundary()
        self._append("step/start", {"turn": turn.number, "step": turn.step})
        turn.step_open = True
        header = self.request_header()
        folded = self._folded
        if not self._header_logged or folded != header:
            if not self._header_logged:
                reason = "resume" if folded is not None else "initial"
            else:
                reason = "change"
            self._append("request/header", {"header": header, "reason": reason})
            self._header_logged = True
            self._folded = header
        request: dict[str, Any] = {
            "provider": header["config"]["provider"],
            "model": header["config"]["model"],
            "messages": boundary,
        }
        if "system" in header:
            request["system"] = header["system"]
        if "tools" in header:
            request["tools"] = header["tools"]
        request["sessionId"] = self.id
        self._requests.append(
            FrozenDict({k: v if k == "messages" else freeze(v) for k, v in request.items()})
        )
        spec = self.model.next()
        for chunk in partial_chunks(spec):  # an unfinished stream: chunks, never a message
            self._append(
                "assistant/chunk", {"turn": turn.number, "step": turn.step, "chunk": chunk}
            )
        if spec.get("hold") or spec.get("hang"):
            turn.pending = spec
            self.phase = Phase.STREAM
            return "model"
        return self._deliver(turn, spec, "model")

    def _stream(self) -> str | None:
        turn = self._require_turn()
        if self._abort is not None:
            self._interrupt(turn)
            return "stream"
        if turn.pending.get("hang"):
            return None  # the stream never finishes by itself: only an interrupt ends it
        spec, turn.pending = turn.pending, None
        return self._deliver(turn, spec, "stream")

    def _deliver(self, turn: Turn, spec: Mapping[str, Any], name: str) -> str:
        """The reply of one model call: stream, ``assistant/message``, tool batch or error."""
        response = render(spec, turn.number, turn.step)
        if response.error is not None:
            message, code = response.error
            self._close_step(turn)
            self._fail(turn, message, code)
            self._close_turn(turn)
            return name
        seqs = [
            self._append(
                "assistant/chunk", {"turn": turn.number, "step": turn.step, "chunk": c}
            ).seq
            for c in response.chunks
        ]
        self.log.append(
            "assistant/message",
            {
                "turn": turn.number,
                "step": turn.step,
                "content": response.content,
                "provenance": {"provider": self.options.provider, "model": self.options.model},
            },
            source_event_seqs=seqs,
        )
        turn.had_tool_calls = bool(response.tool_calls)
        if response.tool_calls:
            turn.calls = response.tool_calls
            turn.call_index = 0
            self._tool_batch = True
            self.phase = Phase.TOOL
        else:
            turn.steered = self._drain_steering(turn)
            self.phase = Phase.POST_STEP
        return name

    def _tool(self) -> str:
        turn = self._require_turn()
        if self._abort is not None:
            self._interrupt(turn)
            return "tool"
        call = turn.calls[turn.call_index]
        self._run_call(turn, call)
        turn.call_index += 1
        if turn.call_index == len(turn.calls):
            self._end_batch()
            turn.steered = self._drain_steering(turn)
            self.phase = Phase.POST_STEP
        return "tool"

    def _post_step(self) -> str:
        turn = self._require_turn()
        if self._abort is not None:
            self._interrupt(turn)
            return "post-step"
        self._close_step(turn)
        turn.cont = turn.had_tool_calls or turn.steered
        self.phase = Phase.TURN_STOP
        return "post-step"

    def _turn_stop(self) -> str:
        turn = self._require_turn()
        if self._abort is not None:
            self._interrupt(turn)
            return "turn-stop"
        cont = turn.cont or bool(self.steering)  # pending steering overrides a stop
        stop = False
        for listener in [x for x in self.listeners if x.event == "turn-stop"]:
            self._invoked(listener)
            stop = stop or listener.kind == "stop"
        if stop:
            self._terminal_stopped = True
            self.steering.clear()  # terminal discard: message and contexts together
            cont = False
        if cont:
            self._begin_step(turn)
        else:
            self._close_turn(turn)
        return "turn-stop"

    def _flush(self) -> str:
        late = list(self.steering)
        self.steering.clear()
        if not self._terminal_stopped:
            self.queued.extend(late)  # the same frozen record; no new agent/queued
        if not self.queued:
            self._set_status("idle")
        self.phase = Phase.HEAD
        return "flush"

    def _begin_step(self, turn: Turn) -> None:
        turn.step += 1
        self._drain_steering(turn)
        self.phase = Phase.MODEL

    def _drain_steering(self, turn: Turn) -> bool:
        """ENV-060: drained steering skips prompt-submit but gets the same placement split."""
        drained = list(self.steering)
        self.steering.clear()
        for record in drained:
            prepared = self.place_prompt(record.content, record.source, record.contexts)
            self._append("steering/message", {"turn": turn.number, **prepared.data})
            for context in prepared.separate:
                self._append("context/message", context)
        return bool(drained)

    def _interrupt(self, turn: Turn) -> None:
        """Close the turn as aborted/disposed (synthetic results keep calls paired)."""
        if self._tool_batch:
            for call in turn.calls[turn.call_index :]:
                self._abort_call(turn, call)
            turn.call_index = len(turn.calls)
            self._end_batch()
        self._close_step(turn)
        disposed = self.status == "disposed"
        turn.reason = FrozenDict({"kind": "disposed" if disposed else "aborted"})
        self._close_turn(turn)

    def _interrupt_or_close(self, turn: Turn) -> None:
        if self._abort is not None:
            self._interrupt(turn)
        else:
            self._close_turn(turn)

    def _fail(self, turn: Turn, message: str, code: str | None) -> None:
        reason: dict[str, Any] = {"kind": "error", "step": turn.step, "message": message}
        if code is not None:
            reason["code"] = code
        turn.reason = freeze(reason)
        error: dict[str, Any] = {"turn": turn.number, "step": turn.step, "message": message}
        if code is not None:
            error["code"] = code
        self._notify("agent/error", **error)

    def _close_step(self, turn: Turn) -> None:
        if turn.step_open:
            self._append("step/end", {"turn": turn.number, "step": turn.step})
            turn.step_open = False

    def _close_turn(self, turn: Turn) -> None:
        self._owner = False
        self._abort = None
        self._append("turn/end", {"turn": turn.number, "reason": turn.reason})
        self._turn = None
        self.phase = Phase.FLUSH if self.status != "disposed" else Phase.DISPOSED
