"""A host with side sessions on its own asyncio loop, and broken variants of it.

``SideKit`` implements only ``side.scenario`` (docs/side-scenario.md) and owes the
reference model nothing but the script's parsing: each agent is an asyncio task draining
its own inbox; its model adapter records the request, runs the steps bound to it and
yields to the event loop before answering, so parent and child really interleave.  Its
side sessions are its own: its own balanced-prefix walk, header fields (an ``origin``),
a framing written as a bare context/message with its own words and plugin name (no
injection turn, no meta), a handback asked for with its own words, and merge-backs under
its own heading, capped in UTF-16 code units, appended without a turn of their own.  Turn
end reasons are its own (``cancelled``).  It passes every seed check of
conformance/test_side_scenario.py; each subclass breaks one sentence of seed 004
(tests/side_kit_variants.py, tests/test_side_scenario_kits.py).  Selectable as
``python:side_kit:side_kit`` with ``tests/`` on the path.
"""

from __future__ import annotations

import asyncio
import copy
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from dsh_conformance.adapters.contract import Handshake, ImplementationError, ImplementationInfo
from dsh_conformance.model import side_scenario
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.frozen import thaw

ADVISOR = {"kind": "plugin", "plugin": "side-advisor"}
SIDECHAT = {"kind": "plugin", "plugin": "sidechat"}
USER = {"kind": "user"}
FRAMING = (
    "You are now in a side conversation about the discussion so far. Only answer and explain; "
    "do not change any files or state, and do not continue the main task."
)
HEADING = "### Notes from a side conversation\n"


class KitError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def text_block(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def fold(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kit's own view of what the model sees: appends pushed, replaces spliced."""
    nodes: list[dict[str, Any]] = []
    for event in events:
        op = event.get("surfaceOp")
        if op is None:
            continue
        if op == "append":
            nodes.append(event)
        else:
            seqs = [n["seq"] for n in nodes]
            nodes[seqs.index(op["start"]) : seqs.index(op["end"]) + 1] = [event]
    return nodes


def message(event: dict[str, Any]) -> dict[str, Any] | None:
    data = event["data"]
    if event["type"] == "assistant/message":
        if not data["content"]:
            return None
        return {"role": "assistant", "content": data["content"], "provenance": data["provenance"]}
    if event["type"] == "tool/result":
        block = {
            "type": "tool-result",
            "toolCallId": data["callId"],
            "content": data["content"],
            "isError": data["isError"],
        }
        return {"role": "user", "content": [block]}
    return {"role": "user", "content": data["content"]}


def balanced_end(events: list[dict[str, Any]]) -> int:
    """The kit's fork point: the end of the last turn after which nothing is left open."""
    best, in_step, waiting = 0, False, set()
    for index, event in enumerate(events):
        kind, data = event["type"], event["data"]
        if kind == "step/start":
            in_step = True
        elif kind == "step/end":
            in_step = False
        elif kind == "tool/call":
            waiting.add(data["callId"])
        elif kind == "tool/result":
            waiting.discard(data["callId"])
        elif kind == "turn/end" and not in_step and not waiting:
            best = index + 1
    return best


class KitAgent:
    """One agent: a log, an inbox drained by an asyncio task, a scripted model adapter."""

    def __init__(
        self, host: KitHost, name: str, header: dict[str, Any], events: list[dict[str, Any]]
    ) -> None:
        self.host, self.name, self.header, self.events = host, name, header, events
        self.inbox: deque[tuple[str, dict[str, Any]]] = deque()
        self.task: asyncio.Task[None] | None = None
        self.disposed = False
        self.requests: list[dict[str, Any]] = []
        self.replies: deque[dict[str, Any]] = deque()
        self.stop: asyncio.Event | None = None
        self.answers: list[str] = []  # the last assistant text of each completed turn
        self.handback: str | None = None
        self.asked = False
        self.pending: list[dict[str, Any]] = []  # contexts waiting for the next step

    @property
    def status(self) -> str:
        if self.disposed:
            return "disposed"
        return "running" if self.task is not None or self.inbox else "idle"

    def append(self, kind: str, data: dict[str, Any], surface: bool = False) -> None:
        event = {"type": kind, "seq": len(self.events), "time": self.host.clock(), "data": data}
        if surface:
            event["surfaceOp"] = "append"
        self.events.append(event)

    def turns(self) -> int:
        return sum(1 for e in self.events if e["type"] == "turn/start")

    def send(self, text: str, source: dict[str, Any] = USER) -> None:
        if self.disposed:
            raise KitError("DSH_AGENT_DISPOSED", f"{self.name} is disposed")
        self.inbox.append((text, source))
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self.drain())

    def add_context(self, content: list[Any], source: dict[str, Any]) -> None:
        """A context for the model: now when idle, else before the turn's next step."""
        if self.task is None:
            self.append("context/message", {"content": content, "source": source}, True)
        else:
            self.pending.append({"content": content, "source": source})

    def cancel(self) -> None:
        self.inbox.clear()
        if self.stop is not None:
            self.stop.set()

    def dispose(self) -> None:
        self.disposed = True
        self.cancel()

    async def drain(self) -> None:
        while self.inbox and not self.disposed:
            text, source = self.inbox.popleft()
            await self.turn(text, source)
        self.task = None

    def system(self) -> str:
        options = self.host.options
        persona = str(options.get("persona", "You are a helpful agent."))
        persona = persona.replace("{{cwd}}", str(self.header.get("cwd", "")))
        persona = persona.replace("{{model}}", "scripted")
        sections = sorted(options.get("sections", []), key=lambda s: s.get("order", 0))
        return "\n\n".join([persona, *(s["text"] for s in sections)])

    def tools(self) -> list[dict[str, Any]]:
        return [
            {"name": t["name"], "description": t.get("description", ""), "inputSchema": {}}
            for t in self.host.options.get("tools", [])
        ]

    async def turn(self, text: str, source: dict[str, Any]) -> None:
        number = self.turns() + 1
        handback = source != USER
        self.stop = asyncio.Event()
        trigger = {"kind": "message", "source": source}
        self.append("turn/start", {"turn": number, "trigger": trigger})
        self.append("user/message", {"content": text_block(text), "source": source}, True)
        reason: dict[str, Any] = {"kind": "completed"}
        answer = ""
        step = 0
        while True:
            step += 1
            for ctx in self.pending:
                self.append("context/message", ctx, True)
            self.pending.clear()
            reply = await self.ask_model(number, step)
            if reply is None:
                reason = {"kind": "disposed" if self.disposed else "cancelled"}
                break
            if "error" in reply:
                self.append("step/end", {"turn": number, "step": step})
                reason = {"kind": "error", "code": reply.get("code", "MODEL_ERROR")}
                break
            content = text_block(reply["text"]) if reply.get("text") else []
            calls = reply.get("toolCalls", [])
            content += [
                {"type": "tool-call", "id": c["id"], "name": c["name"], "arguments": "{}"}
                for c in calls
            ]
            provenance = {"provider": "mock", "model": "scripted"}
            self.append(
                "assistant/message",
                {"turn": number, "step": step, "content": content, "provenance": provenance},
                True,
            )
            answer = reply.get("text", "") or answer
            for call in calls:
                self.append("tool/call", {"callId": call["id"], "name": call["name"]})
                await asyncio.sleep(0)
                result = self.host.tool_result(call["name"])
                data = {"callId": call["id"], "content": result, "isError": False}
                self.append("tool/result", data, True)
            self.append("step/end", {"turn": number, "step": step})
            if not calls:
                break
        for ctx in self.pending:
            self.append("context/message", ctx, True)
        self.pending.clear()
        self.append("turn/end", {"turn": number, "reason": reason})
        if reason["kind"] == "completed" and handback and answer:
            self.handback = answer

    async def ask_model(self, number: int, step: int) -> dict[str, Any] | None:
        messages = [m for m in map(message, fold(self.events)) if m is not None]
        header = {"config": {"provider": "mock", "model": "scripted"}, "system": self.system()}
        if self.tools():
            header["tools"] = self.tools()
        self.append("step/start", {"turn": number, "step": step})
        self.append("request/header", {"header": header})
        request = {"provider": "mock", "model": "scripted", "messages": messages, **header}
        del request["config"]
        request["sessionId"] = self.header["id"]
        self.requests.append(copy.deepcopy(request))
        self.host.fire(("request", self.name, len(self.requests)))
        reply = self.replies.popleft() if self.replies else None
        if reply is None:
            reply = {"error": "no reply scripted", "code": "DSH_AGENT_SCRIPT_EXHAUSTED"}
        assert self.stop is not None
        if reply.get("hang"):
            await self.stop.wait()
        else:
            await asyncio.sleep(0)
        if self.stop.is_set() or self.disposed:
            self.append("step/end", {"turn": number, "step": step})
            return None
        return reply


class KitHost:
    """One ``side.scenario.run``: the parent, the child once forked, and the steps."""

    def __init__(self, plan: side_scenario.Plan) -> None:
        self.plan = plan
        self.options: dict[str, Any] = thaw(plan.parent.get("options", {}))
        header = {"id": plan.parent["id"], **thaw(plan.parent.get("header", {}))}
        self.parent = KitAgent(self, "parent", header, thaw(plan.parent.get("seed", [])))
        self.parent.replies.extend(thaw(plan.replies["parent"]))
        self.child: KitAgent | None = None
        self.outcomes: list[dict[str, Any]] = [{"fired": False} for _ in plan.steps]
        self.fired: set[tuple[Any, ...]] = set()
        self.ticks = 0

    def clock(self) -> int:
        self.ticks += 1
        return 1_700_000_000_000 + self.ticks

    def tool_result(self, name: str) -> Any:
        for tool in self.options.get("tools", []):
            if tool["name"] == name:
                return tool.get("result", text_block("ok"))
        return text_block("ok")

    def agent(self, name: str) -> KitAgent:
        found = self.parent if name == "parent" else self.child
        if found is None:
            raise KitError("DSH_AGENT_NOT_FOUND", "no side session yet")
        return found

    def fire(self, trigger: tuple[Any, ...]) -> None:
        if trigger in self.fired:
            return
        self.fired.add(trigger)
        for step in self.plan.steps:
            if step.trigger == trigger:
                self.outcomes[step.index] = self.act(step.action, thaw(step.fields))

    def act(self, action: str, fields: dict[str, Any]) -> dict[str, Any]:
        outcome: dict[str, Any] = {"fired": True}
        for name, agent in (("parent", self.parent), ("child", self.child)):
            if agent is not None:
                outcome[name] = {"status": agent.status, "logLength": len(agent.events)}
        try:
            if action in {"send", "steer"}:
                self.agent(fields.get("session", "parent")).send(fields["text"])
            elif action == "cancel":
                self.agent(fields.get("session", "parent")).cancel()
            elif action == "dispose":
                self.dispose(self.agent(fields.get("session", "parent")))
            elif action == "fork":
                outcome["source"] = self.fork()
            elif action == "askHandback":
                self.ask(self.agent("child"), fields.get("cap", 4096))
            else:
                self.merge(self.agent("child"), fields.get("cap", 4096))
        except KitError as exc:
            outcome["error"] = {"code": exc.code, "message": str(exc)}
        return outcome

    def snapshot(self) -> dict[str, Any]:
        return copy.deepcopy({"header": self.parent.header, "events": self.parent.events})

    # --- the kit's side sessions ----------------------------------------------------------

    def seed(self) -> list[dict[str, Any]]:
        events = self.parent.events
        return copy.deepcopy(events[: balanced_end(events)])

    def child_header(self, seed: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.plan.child,
            "origin": "side-session",
            "cwd": self.parent.header.get("cwd"),
            "parentSession": self.parent.header["id"],
            "seedLength": len(seed),
        }

    def frame(self, child: KitAgent) -> None:
        child.add_context(text_block(FRAMING), ADVISOR)

    def fork(self) -> dict[str, Any]:
        if self.parent.disposed:
            raise KitError("DSH_AGENT_DISPOSED", "the parent is disposed")
        before = self.snapshot()
        seed = self.seed()
        child = KitAgent(self, "child", self.child_header(seed), seed)
        child.replies.extend(thaw(self.plan.replies["child"]))
        self.child = child
        self.frame(child)
        return {"before": before, "after": self.snapshot()}

    def ask(self, child: KitAgent, cap: int) -> None:
        room = cap - len(HEADING)
        child.send(f"Sum up this side conversation for the main one in {room} characters.", ADVISOR)

    def capped(self, note: str, cap: int) -> str:
        """Heading and note within *cap* UTF-16 code units, the head kept."""
        merged = HEADING + note
        units = len(merged.encode("utf-16-le", "surrogatepass")) // 2
        if units <= cap:
            return merged
        keep = merged.encode("utf-16-le", "surrogatepass")[: (cap - 1) * 2]
        return keep.decode("utf-16-le", "ignore") + "…"

    def merge(self, child: KitAgent, cap: int) -> None:
        if self.parent.disposed:
            raise KitError("DSH_AGENT_DISPOSED", "the parent is disposed")
        if child.handback is None:
            raise KitError("DSH_SIDE_NO_HANDBACK", "the side session has not answered yet")
        self.parent.add_context(text_block(self.capped(child.handback, cap)), SIDECHAT)

    def dispose(self, agent: KitAgent) -> None:
        agent.dispose()

    # --- the run ------------------------------------------------------------------------------

    async def settle(self) -> None:
        while True:
            tasks = [a.task for a in (self.parent, self.child) if a is not None and a.task]
            if not tasks:
                return
            await asyncio.gather(*tasks)

    async def main(self) -> dict[str, Any]:
        self.fire(("start",))
        idles = [s.trigger[1] for s in self.plan.steps if s.trigger[0] == "idle"]
        last = max(idles, default=0)
        for k in range(1, last + 2):
            await asyncio.sleep(0)
            await self.settle()
            if k <= last:
                self.fire(("idle", k))
        out: dict[str, Any] = {"parent": self.session(self.parent), "steps": self.outcomes}
        if self.child is not None:
            out["child"] = self.session(self.child)
        return out

    def session(self, agent: KitAgent) -> dict[str, Any]:
        status = "disposed" if agent.disposed else "idle"
        log = {"header": agent.header, "events": agent.events}
        return copy.deepcopy({"log": log, "requests": agent.requests, "status": status})


class SideKit:
    """The adapter: ``side.scenario`` only, served by *host*."""

    host: type[KitHost] = KitHost
    name = "side kit"

    def handshake(self) -> Handshake:
        info = ImplementationInfo(name=f"kit: {self.name}", language="python")
        return Handshake(implementation=info, capabilities=frozenset({"side.scenario"}))

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "reset":
            return None
        if op != "side.scenario.run":
            raise ImplementationError("DSH_UNSUPPORTED_OPERATION", f"no operation {op!r}")
        try:
            plan = side_scenario.validate(args)  # the published schema, nothing more
        except DshError as exc:
            raise ImplementationError(exc.code, exc.message) from exc
        return asyncio.run(self.host(plan).main())

    def close(self) -> None:
        pass


def kit_factory(host: type[KitHost], name: str) -> Callable[[], SideKit]:
    def factory() -> SideKit:
        kit = SideKit()
        kit.host, kit.name = host, name
        return kit

    return factory


side_kit = kit_factory(KitHost, "side kit")


# --- the reference with capabilities withheld (issue 37's measurement) -------------------------


def _reference_without(*withheld: str) -> Any:
    from dsh_conformance.adapters.reference import ReferenceAdapter

    declared = ReferenceAdapter().handshake().capabilities
    return ReferenceAdapter(capabilities=declared - set(withheld))


def reference_without_agent() -> Any:
    """The reference serving everything but the micro-step ``agent`` capability."""
    return _reference_without("agent")


def reference_without_agent_or_side_scenario() -> Any:
    """The same, without ``side.scenario`` either: the state before issue 37 item 1."""
    return _reference_without("agent", "side.scenario")
