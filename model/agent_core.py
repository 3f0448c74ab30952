"""The agent's state and what reading it returns: the part every micro-step shares.

The seed gives agents state (the inbox, the log, the captured requests); it lives here
once, with the primitives that change it (append an event, notify, set the status) and
the reads a caller makes.  The driver (model/driver.py) and the tool calls
(model/tool_calls.py) build on it; model/agent.py adds the caller verbs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.inbox import InboxRecord
from dsh_conformance.model.placement import prepare_prompt_message
from dsh_conformance.model.prompt_submit import Listener
from dsh_conformance.model.scripted import ScriptedModel
from dsh_conformance.model.session import Event, Replace, SessionHeader, SessionLog, derive_message
from dsh_conformance.model.system_prompt import AgentOptions, render_system_prompt
from dsh_conformance.model.turn import Phase, Turn, is_turn_open


def _disposed(agent_id: str) -> DshError:
    return DshError(ErrorCode.AGENT_DISPOSED, f"agent {jsstr.quote(agent_id)} is disposed")


class AgentCore:
    """The state of one agent over one session log, and its reads."""

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
        self._turn: Turn | None = None
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

    def _check_live(self) -> None:
        if self.status == "disposed":
            raise _disposed(self.id)

    def _require_turn(self) -> Turn:
        assert self._turn is not None, "driver phase without an open turn"
        return self._turn

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
