"""Side-session scripts on the reference's loop (``side.scenario.run``, docs/side-scenario.md).

A host that runs its agents on its own asynchronous loop cannot be driven in the suite's
micro-steps; it can run a whole side-session program -- the parent's turns, a fork, the
child's turns, a handback request and a merge-back -- and report each session's log and
requests.  This module validates such a script and runs it on the reference: the stepped
parent and, once forked, the stepped child are driven in turn, one micro-step each, every
reply held so each model call has an "in flight" window where its ``request`` steps fire.
The side-session mechanics are model/side.py's, unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr, side
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, thaw
from dsh_conformance.model.scenario_script import Step, Trigger, script_validator
from dsh_conformance.model.scripted import validate_response
from dsh_conformance.model.session import SessionHeader, events_from_json
from dsh_conformance.model.system_prompt import AgentOptions

if TYPE_CHECKING:
    from dsh_conformance.spec.compiled import Compiled

SESSIONS: Final = ("parent", "child")
#: Actions that act on one session (``session``, default parent).
SESSION_ACTIONS: Final = frozenset({"send", "steer", "cancel", "dispose"})
#: Fields each action may carry besides ``on`` and ``do``.
FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "send": frozenset({"session", "text"}),
    "steer": frozenset({"session", "text"}),
    "cancel": frozenset({"session"}),
    "dispose": frozenset({"session"}),
    "fork": frozenset(),
    "askHandback": frozenset({"cap"}),
    "mergeBack": frozenset({"cap"}),
}


def _error(code: ErrorCode, pointer: str, message: str) -> DshError:
    return DshError(code, f"{pointer or '/'}: {message}", hint="see docs/side-scenario.md")


def _validator() -> Compiled:
    return script_validator("ops/agent.json", "ops/scenario.json", "ops/side_scenario.json")


@frozen
class Plan:
    """A validated script, ready to run."""

    parent: Mapping[str, Any]
    child: str
    replies: Mapping[str, tuple[FrozenDict, ...]]
    steps: tuple[Step, ...]


def trigger_key(on: object) -> Trigger:
    """``("start",)``, ``("idle", k)`` or ``("request", session, n)``."""
    if on == "start":
        return ("start",)
    assert isinstance(on, Mapping)
    if "idle" in on:
        return ("idle", on["idle"])
    return ("request", on.get("session", "parent"), on["request"])


def validate(script: object) -> Plan:
    """Check a script completely before anything runs (DSH_SCENARIO_*)."""
    errors = sorted(_validator().iter_errors(script), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match  # only to word an invalid script

        best = best_match(errors)
        assert best is not None
        pointer = "".join(f"/{part}" for part in best.absolute_path)
        raise _error(ErrorCode.SCENARIO_INVALID, pointer, best.message)
    assert isinstance(script, Mapping)
    parent = script["parent"]
    if jsstr.canonical(script["child"]) == jsstr.canonical(parent["id"]):
        raise _error(ErrorCode.SCENARIO_INVALID, "/child", "the child needs an id of its own")
    tools = {tool["name"] for tool in parent.get("options", {}).get("tools", ())}
    replies: dict[str, tuple[FrozenDict, ...]] = {}
    call_ids: set[str] = set()
    for session in SESSIONS:
        checked = []
        for i, reply in enumerate(script.get("replies", {}).get(session, ())):
            where = f"/replies/{session}/{i}"
            for j, call in enumerate(reply.get("toolCalls", ())):
                if call["id"] in call_ids:
                    raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/toolCalls/{j}/id", "dup")
                call_ids.add(call["id"])
                if call["name"] not in tools:
                    raise _error(
                        ErrorCode.SCENARIO_UNKNOWN_TOOL,
                        f"{where}/toolCalls/{j}/name",
                        f"the parent has no tool {jsstr.quote(call['name'])}",
                    )
            try:
                checked.append(validate_response(reply))
            except DshError as exc:
                raise _error(ErrorCode.SCENARIO_INVALID, where, exc.message) from None
        replies[session] = tuple(checked)
    steps = tuple(_step(i, spec) for i, spec in enumerate(script["steps"]))
    _check_reachable(steps, replies)
    return Plan(parent, jsstr.canonical(script["child"]), replies, steps)


def _step(index: int, spec: Mapping[str, Any]) -> Step:
    where = f"/steps/{index}"
    action = spec["do"]
    fields = {k: v for k, v in spec.items() if k not in {"on", "do"}}
    extra = sorted(set(fields) - FIELDS[action])
    if extra:
        raise _error(
            ErrorCode.SCENARIO_INVALID, f"{where}/{extra[0]}", f"{action} takes no {extra[0]}"
        )
    if action in {"send", "steer"} and "text" not in fields:
        raise _error(ErrorCode.SCENARIO_INVALID, where, f"{action} needs text")
    return Step(index, trigger_key(spec.get("on", "start")), action, FrozenDict(fields))


def _check_reachable(steps: Sequence[Step], replies: Mapping[str, Sequence[FrozenDict]]) -> None:
    """Reject request triggers with no reply, and hanging replies nothing ends."""
    for step in steps:
        if step.trigger[0] == "request":
            _, session, n = step.trigger
            if n > len(replies[session]):
                raise _error(
                    ErrorCode.SCENARIO_UNREACHABLE,
                    f"/steps/{step.index}/on",
                    f"no {session} reply {n} is scripted",
                )
    for session in SESSIONS:
        for i, reply in enumerate(replies[session]):
            ended = any(
                s.trigger == ("request", session, i + 1)
                and s.action in {"cancel", "dispose"}
                and s.fields.get("session", "parent") == session
                for s in steps
            )
            if reply.get("hang") and not ended:
                raise _error(
                    ErrorCode.SCENARIO_UNREACHABLE,
                    f"/replies/{session}/{i}",
                    "a hanging reply needs a cancel or dispose of its session on its request",
                )


class Runner:
    """One run: the parent, the child once forked, pending steps and outcomes so far."""

    def __init__(self, plan: Plan) -> None:
        spec = plan.parent
        header = SessionHeader.from_json({**spec.get("header", {}), "id": spec["id"]})
        options = AgentOptions.from_json({**spec.get("options", {}), "fallback": None})
        parent = Agent(header, events_from_json(spec.get("seed", [])), options)
        parent.script(_held(plan.replies["parent"]))
        self.plan = plan
        self.parent = parent
        self.agents: dict[str, Agent] = {parent.id: parent}
        self.outcomes: list[dict[str, Any]] = [{"fired": False} for _ in plan.steps]
        self.fired: set[Trigger] = set()

    @property
    def child(self) -> Agent | None:
        return self.agents.get(self.plan.child)

    def session(self, name: str) -> Agent | None:
        return self.parent if name == "parent" else self.child

    def fire(self, trigger: Trigger) -> None:
        if trigger in self.fired:
            return
        self.fired.add(trigger)
        for step in self.plan.steps:
            if step.trigger == trigger:
                self.outcomes[step.index] = self.act(step)

    def seen(self) -> dict[str, Any]:
        out: dict[str, Any] = {"fired": True}
        for name in SESSIONS:
            agent = self.session(name)
            if agent is not None:
                out[name] = {"status": agent.status, "logLength": len(agent.events)}
        return out

    def act(self, step: Step) -> dict[str, Any]:
        outcome = self.seen()
        fields = thaw(step.fields)
        try:
            if step.action in SESSION_ACTIONS:
                agent = self.session(fields.get("session", "parent"))
                if agent is None:
                    raise DshError(ErrorCode.AGENT_NOT_FOUND, "no side session has been forked")
                if step.action == "send":
                    agent.send([{"type": "text", "text": fields["text"]}])
                elif step.action == "steer":
                    agent.steer([{"type": "text", "text": fields["text"]}])
                elif step.action == "cancel":
                    agent.cancel()
                else:
                    agent.dispose()
            elif step.action == "fork":
                before = self.parent.log.to_json()
                side.fork(self.agents, self.parent.id, child_id=self.plan.child)
                outcome["source"] = {"before": before, "after": self.parent.log.to_json()}
                child = self.child
                assert child is not None
                child.script(_held(self.plan.replies["child"]))
            elif step.action == "askHandback":
                side.ask_handback(self.agents, self.plan.child, fields.get("cap"))
            else:
                side.merge_back(self.agents, self.parent.id, self.plan.child, cap=fields.get("cap"))
        except DshError as exc:
            outcome["error"] = exc.to_json()
        return outcome

    def tick(self) -> bool:
        """One micro-step of each live agent, parent first; False when none had one."""
        moved = False
        for name in SESSIONS:
            agent = self.session(name)
            if agent is None:
                continue
            before = agent.request_count
            if agent.step() is not None:
                moved = True
            if agent.request_count > before:
                self.fire(("request", name, agent.request_count))
        return moved

    def run(self) -> dict[str, Any]:
        self.fire(("start",))
        idles = [s.trigger[1] for s in self.plan.steps if s.trigger[0] == "idle"]
        last_idle = max(idles, default=0)
        for idle in range(1, last_idle + 2):
            while self.tick():
                pass
            if any(a.status == "running" for a in self.agents.values()):
                raise DshError(ErrorCode.ADAPTER_FAILURE, "the side scenario did not settle")
            if idle <= last_idle:
                self.fire(("idle", idle))
        out: dict[str, Any] = {"parent": _session(self.parent), "steps": self.outcomes}
        if self.child is not None:
            out["child"] = _session(self.child)
        return out


def _held(replies: Sequence[FrozenDict]) -> list[Any]:
    """Every reply held, so each model call has an "in flight" window."""
    return [thaw(r) if r.get("hang") else {**thaw(r), "hold": True} for r in replies]


def _session(agent: Agent) -> dict[str, Any]:
    return {"log": agent.log.to_json(), "requests": agent.requests, "status": agent.status}


def run(script: object) -> dict[str, Any]:
    """Validate *script*, then run it on fresh reference agents (``side.scenario.run``)."""
    return Runner(validate(script)).run()
