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

State lives in the agent because the seed gives agents state; everything handed out is a
thawed copy, everything accepted is a frozen snapshot.  One concept per module, each layer
building on the one before: model/turn.py (the open turn, the program counter),
model/agent_core.py (the state, its reads and the primitives that change it),
model/tool_calls.py (a tool call and its paired result), model/driver.py (the
micro-steps above), and here the caller verbs and configuration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from dsh_conformance.model import jsstr
from dsh_conformance.model.driver import Driver
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.inbox import USER_SOURCE, accept, snapshot
from dsh_conformance.model.prompt_submit import parse_listener
from dsh_conformance.model.turn import USER_CANCEL, Phase, is_turn_open, last_turn_number


class Agent(Driver):
    """One agent over one session log (INBOX-*, ENV-050..ENV-099).

    Create it from a header plus optional seed events; drive it with ``step()`` or
    ``run_until_idle()``; read ``log``, ``requests``, ``notifications``, ``submissions``.
    """

    # --- configuration --------------------------------------------------------------------

    def listen(self, spec: object) -> None:
        """Install a declarative listener (model/prompt_submit.py); later = further inside."""
        self.listeners.append(parse_listener(spec))

    def script(self, responses: Iterable[object]) -> None:
        """Queue scripted model responses (model/scripted.py)."""
        self.model.extend(responses)

    # --- caller verbs -----------------------------------------------------------------------

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
