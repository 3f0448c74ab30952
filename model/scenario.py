"""Scenario scripts: validation and a run on the reference agent (docs/scenario.md).

A script is data: an agent, listener decisions, model replies and host actions bound to
triggers a real loop exposes (start, the k-th prompt-submit, the n-th model call, a tool
call, a turn's end, the k-th idle).  ``validate`` rejects a malformed script before
anything runs, naming the offending item by JSON Pointer; ``run`` drives the stepped agent
(D-61) in its natural schedule and fires each trigger at the micro-step boundary where that
event happens, with every reply held so a model call has an "in flight" window.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr, side
from dsh_conformance.model.agent import Agent, Phase, last_turn_number
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.display import display
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, thaw
from dsh_conformance.model.prepare import ReadOutcome
from dsh_conformance.model.prepare import prepare as prepare_references
from dsh_conformance.model.prompt_submit import Listener, parse_listener
from dsh_conformance.model.scripted import validate_response
from dsh_conformance.model.session import SessionHeader, events_from_json
from dsh_conformance.model.snapshot import read_log, session_from_json
from dsh_conformance.model.system_prompt import AgentOptions

if TYPE_CHECKING:
    from dsh_conformance.spec.compiled import Compiled

Trigger = tuple[Any, ...]
Decode = Callable[[Any], Any]

MESSAGE_ACTIONS: Final = frozenset({"send", "steer", "inject"})
#: Fields each action may carry besides ``on`` and ``do``.
FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "send": frozenset({"text", "content", "source", "contexts", "prepared"}),
    "steer": frozenset({"text", "content", "source", "contexts", "prepared"}),
    "inject": frozenset({"text", "content", "source", "meta"}),
    "cancel": frozenset({"cause"}),
    "dispose": frozenset(),
    "fork": frozenset({"child"}),
    "mergeBack": frozenset({"child", "text", "cap"}),
    "prepare": frozenset({"text", "content", "references", "target"}),
}
#: Triggers a prepare step may use: preparation is the host's, between turns or before any.
PREPARE_TRIGGERS: Final = frozenset({"start", "idle"})
#: Fields an action must carry.
REQUIRED: Final[Mapping[str, frozenset[str]]] = {
    "fork": frozenset({"child"}),
    "mergeBack": frozenset({"child", "text"}),
    "prepare": frozenset({"references"}),
}


def _error(code: ErrorCode, pointer: str, message: str) -> DshError:
    return DshError(code, f"{pointer or '/'}: {message}", hint="see docs/scenario.md")


@functools.cache
def script_validator(*files: str) -> Compiled:
    """The validator of the ``script`` that the last of *files* defines (the schemas it
    refers to come first), compiled once per process (D-500): one loader for
    scenario.run and side.scenario.run.  The spec package is imported here, on the
    first validation, not with the model (a served process never loads its TOML
    machinery unless a script arrives: issue 44)."""
    from importlib import resources

    from dsh_conformance.spec.compiled import Compiled

    schemas = resources.files("dsh_conformance.spec") / "schemas"
    loaded = [
        json.loads((schemas / name).read_text(encoding="utf-8")) for name in ("data.json", *files)
    ]
    return Compiled(
        {"$ref": loaded[-1]["$id"] + "#/$defs/script"},
        [(data["$id"], data) for data in loaded],
    )


def _validator() -> Compiled:
    return script_validator("ops/agent.json", "ops/scenario.json")


def _pointer(path: Sequence[object]) -> str:
    return "".join(f"/{part}" for part in path)


@frozen
class Step:
    """One host action: its index in the script, trigger key and JSON fields."""

    index: int
    trigger: Trigger
    action: str
    fields: FrozenDict


@frozen
class Plan:
    """A validated script, ready to run."""

    agent: Mapping[str, Any]
    listeners: tuple[tuple[Mapping[str, Any], Listener], ...]
    replies: tuple[FrozenDict, ...]
    steps: tuple[Step, ...]
    sessions: Mapping[str, Any] = FrozenDict()
    display: bool = False


def trigger_key(on: object) -> Trigger:
    """``"start"`` or ``{kind: value}`` as a hashable key."""
    if on == "start":
        return ("start",)
    assert isinstance(on, Mapping)
    ((kind, value),) = on.items()
    return (str(kind), value)


def validate(script: object) -> Plan:
    """Check a script completely before anything runs (DSH_SCENARIO_*)."""
    errors = sorted(_validator().iter_errors(script), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match  # only to word an invalid script

        best = best_match(errors)
        assert best is not None
        raise _error(ErrorCode.SCENARIO_INVALID, _pointer(best.absolute_path), best.message)
    assert isinstance(script, Mapping)
    agent = script["agent"]
    options = agent.get("options", {})
    tools = {tool["name"] for tool in options.get("tools", ())}
    replies = []
    call_ids: set[str] = set()
    for i, reply in enumerate(script.get("replies", ())):
        for j, call in enumerate(reply.get("toolCalls", ())):
            where = f"/replies/{i}/toolCalls/{j}"
            if call["id"] in call_ids:
                raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/id", "duplicate tool call id")
            call_ids.add(call["id"])
            if call["name"] not in tools:
                raise _error(
                    ErrorCode.SCENARIO_UNKNOWN_TOOL,
                    f"{where}/name",
                    f"the agent has no tool {jsstr.quote(call['name'])}",
                )
        try:
            replies.append(validate_response(reply))
        except DshError as exc:
            raise _error(ErrorCode.SCENARIO_INVALID, f"/replies/{i}", exc.message) from None
    listeners = tuple(_listener(i, spec) for i, spec in enumerate(script.get("listeners", ())))
    steps = tuple(_step(i, spec) for i, spec in enumerate(script["steps"]))
    forked = {s.fields["child"] for s in steps if s.action == "fork"}
    for s in steps:
        if s.action == "mergeBack" and s.fields["child"] not in forked:
            raise _error(
                ErrorCode.SCENARIO_INVALID, f"/steps/{s.index}/child", "no fork step makes it"
            )
    for s in steps:
        where = f"/steps/{s.index}"
        if s.action == "prepare" and s.trigger[0] not in PREPARE_TRIGGERS:
            raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/on", "prepare runs on start or idle")
        if "prepared" in s.fields:
            k = s.fields["prepared"]
            if not (k < s.index and steps[k].action == "prepare"):
                raise _error(
                    ErrorCode.SCENARIO_INVALID, f"{where}/prepared", "no earlier prepare step"
                )
    seed_turns = last_turn_number(events_from_json(agent.get("seed", [])))
    _check_reachable(steps, replies, call_ids, seed_turns)
    sessions = FrozenDict(script.get("sessions", {}))
    return Plan(agent, listeners, tuple(replies), steps, sessions, bool(script.get("display")))


def _listener(index: int, spec: Mapping[str, Any]) -> tuple[Mapping[str, Any], Listener]:
    where = f"/listeners/{index}"
    event = spec.get("event", "prompt-submit")
    if "submission" in spec and event != "prompt-submit":
        raise _error(ErrorCode.SCENARIO_INVALID, where, "submission is for prompt-submit")
    if "turn" in spec and event != "turn-stop":
        raise _error(ErrorCode.SCENARIO_INVALID, where, "turn is for turn-stop listeners")
    bare = {k: v for k, v in spec.items() if k not in {"submission", "turn"}}
    try:
        return spec, parse_listener(bare)
    except DshError as exc:
        raise _error(ErrorCode.SCENARIO_INVALID, where, exc.message) from None


def _step(index: int, spec: Mapping[str, Any]) -> Step:
    where = f"/steps/{index}"
    action = spec["do"]
    fields = {k: v for k, v in spec.items() if k not in {"on", "do"}}
    extra = sorted(set(fields) - FIELDS[action])
    if extra:
        raise _error(
            ErrorCode.SCENARIO_INVALID, f"{where}/{extra[0]}", f"{action} takes no {extra[0]}"
        )
    given = ("text" in fields) + ("content" in fields) + ("prepared" in fields)
    if action in MESSAGE_ACTIONS | {"prepare"} and given != 1:
        raise _error(ErrorCode.SCENARIO_INVALID, where, f"{action} needs content or text")
    if "prepared" in fields and "contexts" in fields:
        raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/contexts", "prepared carries its own")
    missing = sorted(REQUIRED.get(action, frozenset()) - set(fields))
    if missing:
        raise _error(ErrorCode.SCENARIO_INVALID, where, f"{action} needs {missing[0]}")
    return Step(index, trigger_key(spec.get("on", "start")), action, FrozenDict(fields))


def _check_reachable(
    steps: Sequence[Step], replies: Sequence[FrozenDict], call_ids: set[str], seed_turns: int
) -> None:
    """Reject triggers that can never fire, and hanging replies nothing ends."""
    messages = sum(1 for s in steps if s.action in MESSAGE_ACTIONS | {"mergeBack"})
    prompts = sum(1 for s in steps if s.action in {"send", "steer"})
    for step in steps:
        where = f"/steps/{step.index}/on"
        kind = step.trigger[0]
        value: Any = step.trigger[-1]
        if kind == "request" and value > len(replies):
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"no reply {value} is scripted")
        if kind == "toolCall" and value not in call_ids:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, "no reply makes this tool call")
        if kind == "submit" and value > prompts:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"fewer than {value} prompts")
        if kind == "turnEnd" and not seed_turns < value <= seed_turns + messages:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"turn {value} cannot end here")
    for i, reply in enumerate(replies):
        if reply.get("hang") and not any(
            s.trigger == ("request", i + 1) and s.action in {"cancel", "dispose"} for s in steps
        ):
            raise _error(
                ErrorCode.SCENARIO_UNREACHABLE,
                f"/replies/{i}",
                "a hanging reply needs a cancel or dispose step on its request",
            )


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
