"""The micro-step ``agent`` ops and ``scenario.run`` agree on the reference model.

A scenario is translated into agent ops by a driver written here from docs/scenario.md
alone (it reads only what the ops return: the phase, the log, the request count): each
trigger fires at the micro-step boundary where its event happens, listeners limited to a
submission or a turn are installed ``once`` just before it.  The log, requests and step
outcomes must equal ``scenario.run``'s, so the coarse form is the fine one at documented
points (INBOX-031).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.scenario_programs import EXAMPLES, scripts


def trigger_of(on: object) -> tuple[Any, ...]:
    if on == "start":
        return ("start",)
    assert isinstance(on, Mapping)
    ((kind, value),) = on.items()
    return (kind, value)


class MicroDriver:
    """Runs a scenario script through the micro-step agent ops of one adapter."""

    def __init__(self, script: Mapping[str, Any]) -> None:
        self.adapter = ReferenceAdapter()
        self.script = script
        spec = script["agent"]
        self.id = spec["id"]
        options = {**spec.get("options", {}), "fallback": None}
        self.call("agent.create", id=self.id, options=options, seed=spec.get("seed", []))
        held = [r if r.get("hang") else {**r, "hold": True} for r in script.get("replies", [])]
        self.call("agent.script", agent=self.id, responses=held)
        self.outcomes: list[dict[str, Any]] = [{"fired": False} for _ in script["steps"]]
        self.fired: set[tuple[Any, ...]] = set()
        self.scanned = 0

    def call(self, op: str, **args: Any) -> Any:
        return self.adapter.call(op, args)

    def events(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = self.call("agent.log", agent=self.id)["events"]
        return events

    def act(self, step: Mapping[str, Any]) -> dict[str, Any]:
        state = self.call("agent.state", agent=self.id)
        outcome: dict[str, Any] = {
            "fired": True,
            "status": state["status"],
            "logLength": len(self.events()),
        }
        args: dict[str, Any] = {"agent": self.id}
        if "text" in step:
            args["content"] = [{"type": "text", "text": step["text"]}]
        for key in ("content", "source", "contexts", "meta", "cause"):
            if key in step:
                args[key] = step[key]
        if step["do"] in {"fork", "mergeBack"}:
            args = {"parent": self.id, "child": step["child"]}
            args.update({k: step[k] for k in ("text", "cap") if k in step})
        try:
            op = (
                f"side.{step['do']}"
                if step["do"] in {"fork", "mergeBack"}
                else f"agent.{step['do']}"
            )
            self.call(op, **args)
        except ImplementationError as exc:
            outcome["error"] = {"code": exc.code, "message": exc.message}
        return outcome

    def fire(self, trigger: tuple[Any, ...]) -> None:
        if trigger in self.fired:
            return
        self.fired.add(trigger)
        for index, step in enumerate(self.script["steps"]):
            if trigger_of(step.get("on", "start")) == trigger:
                self.outcomes[index] = self.act(step)
                self.scan()

    def scan(self) -> None:
        events = self.events()
        while self.scanned < len(events):
            event = events[self.scanned]
            self.scanned += 1
            if event["type"] == "turn/end":
                self.fire(("turnEnd", event["data"]["turn"]))
                events = self.events()

    def next_call(self) -> str:
        """The first call of the last assistant message that has no tool/call yet."""
        events = self.events()
        done = {e["data"]["callId"] for e in events if e["type"] == "tool/call"}
        message = next(e for e in reversed(events) if e["type"] == "assistant/message")
        ids = [b["id"] for b in message["data"]["content"] if b["type"] == "tool-call"]
        return next(i for i in ids if i not in done)

    def install(self, event: str, matches: Any) -> None:
        for spec in self.script.get("listeners", []):
            if spec.get("event", "prompt-submit") == event and matches(spec):
                bare = {k: v for k, v in spec.items() if k not in {"submission", "turn"}}
                self.call("agent.listen", agent=self.id, listener={**bare, "once": True})

    def before_step(self) -> None:
        phase = self.call("agent.state", agent=self.id)["phase"]
        if phase == "submit":
            k = len(self.call("agent.submissions", agent=self.id)) + 1
            self.fire(("submit", k))
            if self.call("agent.state", agent=self.id)["phase"] == "submit":
                self.install("prompt-submit", lambda s: s.get("submission", k) == k)
        elif phase == "tool":
            self.fire(("toolCall", self.next_call()))
        elif phase == "turn-stop":
            turn = max(e["data"]["turn"] for e in self.events() if e["type"] == "turn/start")
            self.install("turn-stop", lambda s: s.get("turn", turn) == turn)

    def drive(self) -> None:
        while True:
            self.before_step()
            before = len(self.call("agent.requests", agent=self.id))
            if self.call("agent.step", agent=self.id)["step"] is None:
                return
            after = len(self.call("agent.requests", agent=self.id))
            if after > before:
                self.fire(("request", after))
            self.scan()

    def run(self) -> dict[str, Any]:
        self.fire(("start",))
        idles = [trigger_of(s["on"])[1] for s in self.script["steps"] if "idle" in s.get("on", "")]
        last = max(idles, default=0)
        for idle in range(1, last + 2):
            self.drive()
            if idle <= last:
                self.fire(("idle", idle))
        return {
            "requests": self.call("agent.requests", agent=self.id),
            "log": self.call("agent.log", agent=self.id),
            "steps": self.outcomes,
            "status": self.call("agent.state", agent=self.id)["status"],
        }


def one_prompt_listener(script: dict[str, Any]) -> dict[str, Any]:
    """Keep at most one prompt-submit listener: ``once`` listeners behind a listener that
    does not call next() would stay installed, which scenario filters never do."""
    chain = script.get("listeners", [])
    prompt = [s for s in chain if s.get("event", "prompt-submit") == "prompt-submit"][:1]
    rest = [s for s in chain if s.get("event") == "turn-stop"]
    out = {k: v for k, v in script.items() if k != "listeners"}
    if prompt + rest:
        out["listeners"] = prompt + rest
    return out


def assert_agree(script: dict[str, Any]) -> None:
    scenario = ReferenceAdapter().call("scenario.run", script)
    micro = MicroDriver(script).run()
    for key in ("requests", "log", "steps", "status"):
        assert micro[key] == scenario[key], key


def test_the_hand_picked_scenarios_agree() -> None:
    for script in EXAMPLES:
        assert_agree(one_prompt_listener(script))


@settings(max_examples=60, deadline=None)
@given(script=scripts().map(one_prompt_listener))
def test_generated_scenarios_agree(script: dict[str, Any]) -> None:
    assert_agree(script)


def test_the_driver_sees_every_trigger_kind() -> None:
    """The translation is exercised: each trigger kind fires in some hand-picked script."""
    kinds = set()
    for script in EXAMPLES:
        driver = MicroDriver(one_prompt_listener(script))
        driver.run()
        kinds |= {
            trigger_of(s.get("on", "start"))[0]
            for s, o in zip(script["steps"], driver.outcomes, strict=True)
            if o["fired"]
        }
    assert kinds >= {"start", "request", "toolCall", "turnEnd", "idle", "submit"}


@settings(max_examples=30, deadline=None)
@given(script=scripts(side=True).map(one_prompt_listener))
def test_generated_side_scenarios_agree(script: dict[str, Any]) -> None:
    assert_agree(script)
