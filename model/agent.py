"""The reference agent: inbox, prompt-submit admission, placement, and a stepped driver.

Seed 000 "Decision" and "Message ownership"; the driver follows upstream's seed-era
``runLoop``/``runTurn`` (research note B §2.7-2.8) as explicit, synchronous micro-steps so a
test can put caller operations (send, steer, inject, cancel, dispose) at chosen points
(D-61).  Each micro-step is what upstream runs between two ``await`` points:

``claim``      wake, claim the oldest queued record, append ``turn/start``
``submit``     the ``agent/prompt-submit`` waterfall resolved; block / throw / admit the
               prompt with the placement split; top of step 1 (drain steering)
``model``      step boundary snapshot, ``step/start``, request header, captured request,
               the scripted stream and ``assistant/message``
``stream``     only for a held reply (``hold``/``hang``): ``model`` stops after capturing
               the request and this step delivers the reply, so callers can act while the
               model call is in flight (the scenario capability's ``request`` trigger)
``tool``       one tool call of the batch (injections are deferred until the batch ends)
``post-step``  ``step/end`` and the default continuation
``turn-stop``  pending steering / terminal stop; next step, or ``turn/end``
``flush``      after ``turn/end``: late steering becomes queued input (same record)

State lives here because the seed gives agents state; everything handed out is a thawed
copy, everything accepted is a frozen snapshot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

from attrs import define, field, frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.inbox import USER_SOURCE, InboxRecord, accept, snapshot
from dsh_conformance.model.placement import prepare_prompt_message
from dsh_conformance.model.prompt_submit import (
    Allow,
    Block,
    Decision,
    Listener,
    ListenerFailure,
    parse_listener,
    run_waterfall,
)
from dsh_conformance.model.scripted import ScriptedModel, partial_chunks, render
from dsh_conformance.model.session import Event, Replace, SessionHeader, SessionLog, derive_message
from dsh_conformance.model.system_prompt import AgentOptions, render_system_prompt

USER_CANCEL: Final = FrozenDict({"kind": "user"})
ABORTED_BEFORE_DISPATCH: Final = "TOOL_ABORTED_BEFORE_DISPATCH"


@frozen
class ToolOutcome:
    """What one tool call produced: its result content, error flag and error record."""

    content: Any
    is_error: bool = False
    error: Mapping[str, str] | None = None


class Phase(StrEnum):
    """The driver's program counter: which micro-step runs next."""

    HEAD = "claim"
    SUBMIT = "submit"
    MODEL = "model"
    STREAM = "stream"
    TOOL = "tool"
    POST_STEP = "post-step"
    TURN_STOP = "turn-stop"
    FLUSH = "flush"
    DISPOSED = "disposed"


@define
class _Turn:
    """Bookkeeping of the open turn (upstream ``runTurn`` locals)."""

    number: int
    record: InboxRecord
    reason: Any = field(factory=lambda: FrozenDict({"kind": "completed"}))
    step: int = 0
    step_open: bool = False
    calls: tuple[Any, ...] = ()
    call_index: int = 0
    had_tool_calls: bool = False
    steered: bool = False
    cont: bool = False
    pending: Any = None  # a held reply, delivered by the ``stream`` micro-step


def last_turn_number(events: Sequence[Event]) -> int:
    """The latest ``turn/start`` number, or 0 (seeded logs continue numbering)."""
    for event in reversed(events):
        if event.type == "turn/start" and isinstance(event.data, Mapping):
            turn = event.data.get("turn")
            if isinstance(turn, int):
                return turn
    return 0


def is_turn_open(events: Sequence[Event]) -> bool:
    """Whether the last turn boundary in the log is a ``turn/start``."""
    for event in reversed(events):
        if event.type in {"turn/start", "turn/end"}:
            return event.type == "turn/start"
    return False


def _disposed(agent_id: str) -> DshError:
    return DshError(ErrorCode.AGENT_DISPOSED, f"agent {jsstr.quote(agent_id)} is disposed")


class Agent:
    """One agent over one session log (INBOX-*, ENV-050..ENV-099).

    Create it from a header plus optional seed events; drive it with ``step()`` or
    ``run_until_idle()``; read ``log``, ``requests``, ``notifications``, ``submissions``.
    """

    #: The placement split (model/placement.py); a test fixture may swap it for another
    #: placement to show which requirements that placement breaks (D-76).
    place_prompt = staticmethod(prepare_prompt_message)

    def __init__(
        self,
        header: SessionHeader,
        seed: Iterable[Event] = (),
        options: AgentOptions | None = None,
    ) -> None:
        self.options = options or AgentOptions()
        self.log = SessionLog.seeded(header, seed)
        self.model = ScriptedModel(self.options.fallback)
        self.status = "idle"
        self.queued: deque[InboxRecord] = deque()
        self.steering: deque[InboxRecord] = deque()
        self.listeners: list[Listener] = []
        self.phase = Phase.HEAD
        self._turn: _Turn | None = None
        self._owner = False  # a turn cancellation is installed
        self._abort: FrozenDict | None = None
        self._pre_run_cancelled = False
        self._terminal_stopped = False
        self._tool_batch = False
        self._deferred: list[FrozenDict] = []
        self._header_logged = False
        self._folded: Any = self._fold_header(self.log.events)
        self._boundary_cache: list[Any] = []  # frozen derived messages of the surface
        self._boundary_upto = 0  # log length the cache reflects
        self._requests: list[Any] = []
        self._notifications: list[dict[str, Any]] = []
        self._submissions: list[dict[str, Any]] = []

    # --- reading -------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.log.header.id

    @property
    def header(self) -> SessionHeader:
        return self.log.header

    @property
    def events(self) -> tuple[Event, ...]:
        return self.log.events

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every captured model request, in order (deep copies)."""
        return [thaw(r) for r in self._requests]

    @property
    def request_count(self) -> int:
        """How many model calls were made (without copying the requests)."""
        return len(self._requests)

    @property
    def submission_count(self) -> int:
        """How many ``agent/prompt-submit`` invocations ran."""
        return len(self._submissions)

    @property
    def next_call(self) -> Mapping[str, Any] | None:
        """The tool call the next ``tool`` micro-step runs, if that is the next step."""
        turn = self._turn
        if self.phase is not Phase.TOOL or turn is None:
            return None
        call: Mapping[str, Any] = turn.calls[turn.call_index]
        return call

    @property
    def notifications(self) -> list[dict[str, Any]]:
        return [thaw(n) for n in self._notifications]

    @property
    def submissions(self) -> list[dict[str, Any]]:
        """What each ``agent/prompt-submit`` invocation saw: ``{turn, content, source}``."""
        return [thaw(s) for s in self._submissions]

    def system_prompt(self) -> str:
        """The deterministic system prompt bytes of this agent (D-70)."""
        return render_system_prompt(self.options, self.header.cwd)

    def request_header(self) -> dict[str, Any]:
        """The canonical request header: ``{config, system?, tools?}``."""
        header: dict[str, Any] = {
            "config": {"provider": self.options.provider, "model": self.options.model}
        }
        system = self.system_prompt()
        if system:
            header["system"] = system
        tools = self.options.tool_schemas()
        if tools:
            header["tools"] = tools
        return header

    def state(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "phase": str(self.phase),
            "turnOpen": is_turn_open(self.log.events),
            "toolBatch": self._tool_batch,
            "queued": [r.to_json() for r in self.queued],
            "steering": [r.to_json() for r in self.steering],
        }

    # --- configuration --------------------------------------------------------------------

    def listen(self, spec: object) -> None:
        """Install a declarative listener (model/prompt_submit.py); later = further inside."""
        self.listeners.append(parse_listener(spec))

    def script(self, responses: Iterable[object]) -> None:
        """Queue scripted model responses (model/scripted.py)."""
        self.model.extend(responses)

    # --- caller verbs -----------------------------------------------------------------------

    def _check_live(self) -> None:
        if self.status == "disposed":
            raise _disposed(self.id)

    def send(
        self, content: object, source: object = None, contexts: Sequence[object] | None = None
    ) -> None:
        """INBOX-001/002/004: snapshot one record, queue it, announce it."""
        self._check_live()
        record = accept(content, source, contexts)
        self.queued.append(record)
        self._announce(record, steering=False)

    def steer(
        self, content: object, source: object = None, contexts: Sequence[object] | None = None
    ) -> None:
        """INBOX-005: a running agent takes steering; any other status makes it a send."""
        self._check_live()
        if self.status != "running":
            self.send(content, source, contexts)
            return
        record = accept(content, source, contexts)
        self.steering.append(record)
        self._announce(record, steering=True)

    def inject(
        self, content: object, source: object = None, meta: object = jsstr.UNDEFINED
    ) -> None:
        """INBOX-006: a synthetic ``context/message`` with source and optional meta.

        Validated atomically before any append (D-67).  Inside an open turn it is appended
        now (or, during a tool batch, after the batch's results); otherwise it runs a
        one-shot ``injection`` turn.
        """
        self._check_live()
        fields: dict[str, object] = {
            "content": content,
            "source": USER_SOURCE if source is None else source,
        }
        if meta is not jsstr.UNDEFINED:
            fields["meta"] = meta
        data = snapshot(fields)
        if is_turn_open(self.log.events):
            if self._tool_batch:
                self._deferred.append(data)
            else:
                self._append("context/message", data)
            return
        turn = last_turn_number(self.log.events) + 1
        self._append(
            "turn/start", {"turn": turn, "trigger": {"kind": "injection", "source": data["source"]}}
        )
        self._append("context/message", data)
        self._append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})

    def cancel(self, cause: object = None) -> None:
        """INBOX-020: drop queued and steering records (with their contexts); abort a turn."""
        frozen_cause = USER_CANCEL if cause is None else snapshot(cause)
        effective = self._owner or bool(self.queued) or bool(self.steering)
        if effective:
            if not self._owner:
                self._pre_run_cancelled = True
            self._notify("agent/cancel-requested", cause=frozen_cause)
        self.queued.clear()
        self.steering.clear()
        if self._owner and self._abort is None:
            kind = frozen_cause.get("kind") if isinstance(frozen_cause, Mapping) else None
            self._abort = FrozenDict({"kind": kind})

    def dispose(self) -> None:
        """INBOX-021: terminal; un-started records are dropped, an open turn ends disposed."""
        if self.status == "disposed":
            return
        self._set_status("disposed")
        self._abort = FrozenDict({"kind": "disposed"})
        turn = self._turn
        if turn is not None:
            self._interrupt(turn)
        self.queued.clear()
        self.steering.clear()
        self._owner = False
        self.phase = Phase.DISPOSED

    # --- driving ----------------------------------------------------------------------------

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
        self._turn = _Turn(number, record)
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

    def _deliver(self, turn: _Turn, spec: Mapping[str, Any], name: str) -> str:
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

    # --- helpers ----------------------------------------------------------------------------

    def _require_turn(self) -> _Turn:
        assert self._turn is not None, "driver phase without an open turn"
        return self._turn

    def _begin_step(self, turn: _Turn) -> None:
        turn.step += 1
        self._drain_steering(turn)
        self.phase = Phase.MODEL

    def _drain_steering(self, turn: _Turn) -> bool:
        """ENV-060: drained steering skips prompt-submit but gets the same placement split."""
        drained = list(self.steering)
        self.steering.clear()
        for record in drained:
            prepared = self.place_prompt(record.content, record.source, record.contexts)
            self._append("steering/message", {"turn": turn.number, **prepared.data})
            for context in prepared.separate:
                self._append("context/message", context)
        return bool(drained)

    def pre_execute(self, name: str, call: Mapping[str, Any]) -> ToolOutcome | None:
        """The tools pre-execute seam: return an outcome to use instead of running *name*.

        ``None`` (the default) runs the tool.  Side sessions' deny gate (SIDE-028) answers
        here, so the call and its paired result are written the same way either way.
        """
        return None

    def _run_call(self, turn: _Turn, call: Mapping[str, Any]) -> None:
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

    def _abort_call(self, turn: _Turn, call: Mapping[str, Any]) -> None:
        self._record_call(
            turn,
            call,
            ToolOutcome(
                content=({"type": "text", "text": "Error: tool call aborted before dispatch"},),
                is_error=True,
                error={"name": "AbortError", "code": ABORTED_BEFORE_DISPATCH},
            ),
        )

    def _record_call(self, turn: _Turn, call: Mapping[str, Any], outcome: ToolOutcome) -> None:
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

    def _interrupt(self, turn: _Turn) -> None:
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

    def _interrupt_or_close(self, turn: _Turn) -> None:
        if self._abort is not None:
            self._interrupt(turn)
        else:
            self._close_turn(turn)

    def _fail(self, turn: _Turn, message: str, code: str | None) -> None:
        reason: dict[str, Any] = {"kind": "error", "step": turn.step, "message": message}
        if code is not None:
            reason["code"] = code
        turn.reason = freeze(reason)
        error: dict[str, Any] = {"turn": turn.number, "step": turn.step, "message": message}
        if code is not None:
            error["code"] = code
        self._notify("agent/error", **error)

    def _close_step(self, turn: _Turn) -> None:
        if turn.step_open:
            self._append("step/end", {"turn": turn.number, "step": turn.step})
            turn.step_open = False

    def _close_turn(self, turn: _Turn) -> None:
        self._owner = False
        self._abort = None
        self._append("turn/end", {"turn": turn.number, "reason": turn.reason})
        self._turn = None
        self.phase = Phase.FLUSH if self.status != "disposed" else Phase.DISPOSED

    @staticmethod
    def _fold_header(events: Sequence[Event]) -> Any:
        for event in reversed(events):
            if event.type == "request/header" and isinstance(event.data, Mapping):
                return thaw(event.data.get("header"))
        return None

    def _boundary(self) -> tuple[Any, ...]:
        """``derive_messages()`` of the current surface, sharing one frozen message per event.

        Equal to the session module's derivation, but incremental: events never change, so
        while the log only appends surface nodes the previous boundary is extended; a
        ``replace`` (compaction) since the last boundary recomputes it from the surface.
        """
        events = self.log.events
        new = events[self._boundary_upto :]
        if any(isinstance(e.surface_op, Replace) for e in new) or self._boundary_upto == 0:
            self._boundary_cache = []
            nodes: Iterable[Event] = self.log.surface()
        else:
            nodes = (e for e in new if e.surface_op == "append")
        for node in nodes:
            message = freeze(derive_message(node))
            if message is not None:
                self._boundary_cache.append(message)
        self._boundary_upto = len(events)
        return tuple(self._boundary_cache)

    def _append(self, type: str, data: Any) -> Event:
        return self.log.append(type, data)

    def _invoked(self, listener: Listener) -> None:
        if listener.once and listener in self.listeners:
            self.listeners.remove(listener)

    def _set_status(self, status: str) -> None:
        if self.status != status and self.status != "disposed":
            self.status = status
            self._notify("agent/status", status=status)

    def _announce(self, record: InboxRecord, *, steering: bool) -> None:
        """INBOX-004: ``agent/queued`` carries the frozen content, source and contexts."""
        self._notify(
            "agent/queued",
            content=record.content,
            source=record.source,
            contexts=record.contexts,
            steering=steering,
        )

    def _notify(self, event: str, **payload: Any) -> None:
        self._notifications.append(freeze({"event": event, "agent": self.id, **payload}))
