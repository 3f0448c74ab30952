"""Scenario scripts: a run on the reference agent (docs/scenario.md).

A script is data: an agent, listener decisions, model replies and host actions bound to
triggers a real loop exposes (start, the k-th prompt-submit, the n-th model call, a tool
call, a turn's end, the k-th idle).  ``validate`` (model/scenario_script.py) rejects a
malformed script before anything runs, naming the offending item by JSON Pointer; ``run``
drives the stepped agent (D-61) in its natural schedule and fires each trigger at the
micro-step boundary where that event happens, with every reply held so a model call has
an "in flight" window.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.model import jsstr, side
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.display import display
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.prepare import ReadOutcome
from dsh_conformance.model.prepare import prepare as prepare_references
from dsh_conformance.model.prompt_submit import Listener
from dsh_conformance.model.scenario_script import (
    MESSAGE_ACTIONS,
    Decode,
    Plan,
    Step,
    Trigger,
    validate,
)
from dsh_conformance.model.session import SessionHeader, events_from_json
from dsh_conformance.model.snapshot import read_log, session_from_json
from dsh_conformance.model.system_prompt import AgentOptions
from dsh_conformance.model.turn import Phase, last_turn_number


class Runner:
    """One run: the agent, the pending steps by trigger, and the outcomes so far."""

    def __init__(self, plan: Plan, decode: Decode, agent_class: type[Agent]) -> None:
        spec = plan.agent
        header = SessionHeader.from_json({**spec.get("header", {}), "id": spec["id"]})
        options = AgentOptions.from_json({**spec.get("options", {}), "fallback": None})
        self.agent = agent_class(header, events_from_json(spec.get("seed", [])), options)
        self.agents: dict[str, Agent] = {self.agent.id: self.agent}  # side children too
        # every reply is held, so each model call has an "in flight" window
        self.agent.script(
            thaw(r) if r.get("hang") else {**thaw(r), "hold": True} for r in plan.replies
        )
        self.plan = plan
        self.decode = decode
        self.outcomes: list[dict[str, Any]] = [{"fired": False} for _ in plan.steps]
        self.fired: set[Trigger] = set()
        self.scanned = len(self.agent.events)

    def fire(self, trigger: Trigger) -> None:
        if trigger in self.fired:
            return
        self.fired.add(trigger)
        for step in self.plan.steps:
            if step.trigger == trigger:
                self.outcomes[step.index] = self.act(step)
                self.scan()

    def scan(self) -> None:
        """Fire ``turnEnd`` for every ``turn/end`` appended since the last scan."""
        while self.scanned < len(self.agent.events):
            event = self.agent.events[self.scanned]
            self.scanned += 1
            if event.type == "turn/end" and isinstance(event.data, Mapping):
                self.fire(("turnEnd", event.data["turn"]))

    def act(self, step: Step) -> dict[str, Any]:
        agent = self.agent
        outcome: dict[str, Any] = {
            "fired": True,
            "status": agent.status,
            "logLength": len(agent.events),
        }
        fields = thaw(step.fields)
        try:
            if "prepared" in fields:
                earlier = self.outcomes[fields["prepared"]]
                if "prepared" not in earlier:
                    raise DshError(
                        ErrorCode.SCENARIO_UNREACHABLE,
                        f"/steps/{step.index}/prepared: that preparation gave no result",
                    )
                fields["content"] = earlier["prepared"]["content"]
                fields["contexts"] = earlier["prepared"]["contexts"]
            if step.action == "prepare":
                outcome["prepared"] = self.prepare(fields)
            elif step.action in MESSAGE_ACTIONS:
                content = (
                    [{"type": "text", "text": fields["text"]}]
                    if "text" in fields
                    else self.decode(fields["content"])
                )
                source = self.decode(fields["source"]) if "source" in fields else None
                if step.action == "inject":
                    meta = self.decode(fields["meta"]) if "meta" in fields else jsstr.UNDEFINED
                    agent.inject(content, source, meta)
                else:
                    contexts = self.decode(fields["contexts"]) if "contexts" in fields else None
                    verb = agent.send if step.action == "send" else agent.steer
                    verb(content, source, contexts)
            elif step.action == "fork":
                side.fork(self.agents, agent.id, child_id=fields["child"])
            elif step.action == "mergeBack":
                side.merge_back(
                    self.agents,
                    agent.id,
                    fields["child"],
                    cap=fields.get("cap"),
                    text=fields["text"],
                )
            elif step.action == "cancel":
                agent.cancel(self.decode(fields["cause"]) if "cause" in fields else None)
            else:
                agent.dispose()
        except DshError as exc:
            outcome["error"] = exc.to_json()
        return outcome

    def prepare(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        """prepare() on the host's store: the script's sessions plus the agent's own log as
        written so far (INBOX-032, INBOX-035), with the default configuration."""
        content = (
            [{"type": "text", "text": fields["text"]}]
            if "text" in fields
            else self.decode(fields["content"])
        )
        logs = {jsstr.canonical(k): v for k, v in self.plan.sessions.items()}
        logs[self.agent.id] = self.agent.log.to_json()

        def read(sid: str) -> ReadOutcome:
            if sid not in logs:
                return ReadOutcome.failed(f"session {jsstr.quote(sid)} not found", 0)
            try:
                return ReadOutcome.ok(read_log(session_from_json(thaw(logs[sid]))), 0)
            except DshError as exc:
                return ReadOutcome.failed(f"invalid session surface: {exc.message}", 0)

        target = fields.get("target", self.agent.id)
        run = prepare_references(
            target, content, fields["references"], read, ReferenceConfig.from_json(None), None
        )
        prepared: dict[str, Any] = run.to_json()
        return prepared

    def listeners(self) -> list[Listener]:
        """The chain in force for the next micro-step (filters: submission k, turn T)."""
        submission = self.agent.submission_count + 1
        turn = last_turn_number(self.agent.events)
        return [
            listener
            for spec, listener in self.plan.listeners
            if spec.get("submission", submission) == submission and spec.get("turn", turn) == turn
        ]

    def drive(self) -> None:
        """Run micro-steps until none is left, firing the triggers at each boundary."""
        agent = self.agent
        while True:
            call = agent.next_call
            if agent.phase is Phase.SUBMIT:
                self.fire(("submit", agent.submission_count + 1))
            elif call is not None:
                self.fire(("toolCall", call["id"]))
            agent.listeners = self.listeners()
            before = agent.request_count
            if agent.step() is None:
                return
            if agent.request_count > before:
                self.fire(("request", agent.request_count))
            self.scan()

    def run(self) -> dict[str, Any]:
        self.fire(("start",))
        idles = [s.trigger[1] for s in self.plan.steps if s.trigger[0] == "idle"]
        last_idle = max(idles, default=0)
        for idle in range(1, last_idle + 2):
            self.drive()
            if self.agent.status == "running":
                raise DshError(ErrorCode.ADAPTER_FAILURE, "the scenario did not settle")
            if idle <= last_idle:
                self.fire(("idle", idle))
        shown = {"display": display(self.agent.log.events)} if self.plan.display else {}
        return {
            **shown,
            "requests": self.agent.requests,
            "log": self.agent.log.to_json(),
            "steps": self.outcomes,
            "status": self.agent.status,
            "submissions": [
                {"content": s["content"], "source": s["source"]} for s in self.agent.submissions
            ],
            "queued": [
                {k: n[k] for k in ("content", "source", "contexts", "steering")}
                for n in self.agent.notifications
                if n["event"] == "agent/queued"
            ],
        }


def run(
    script: object,
    decode: Decode = lambda value: value,
    agent_class: type[Agent] = Agent,
    runner: type[Runner] = Runner,
) -> dict[str, Any]:
    """Validate *script*, then run it on a fresh reference agent (``scenario.run``).

    *decode* turns the JSON of an action's payload into native values (the adapter's
    ``$hostile`` markers, D-68); *agent_class* and *runner* let a test fixture run a
    modified agent or host.
    """
    return runner(validate(script), decode, agent_class).run()
