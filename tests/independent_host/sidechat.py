"""Side sessions (note 004) and side.scenario.run on this host's own loop.

A fork copies the parent's balanced completed-turn prefix into a new agent's log, stamps
parentSession and seedLength in its header, and writes one advisor framing context right
after the copied prefix, outside any turn, before the child runs at all (the system prompt
stays the parent's). A handback is asked for with an ordinary message the child's loop
answers; a merge injects the latest answer, capped, into the parent as one context with
source {kind: 'plugin', plugin: 'sidechat'}, exactly where inject() would put it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

from tests.independent_host import scripts
from tests.independent_host.agentloop import Agent, Hooks, Record, now_ms
from tests.independent_host.errors import HostError
from tests.independent_host.scenario import SETTLE_SECONDS, Driver, ScriptedModel, ScriptedTools

NOT_FOUND = "DSH_AGENT_NOT_FOUND"
ADVISOR = {"kind": "plugin", "plugin": "side-advisor"}
SIDECHAT = {"kind": "plugin", "plugin": "sidechat"}
DEFAULT_CAP = 2000  # code points
FRAMING = (
    "This is a side conversation branched off the session above. Everything before this"
    " note is shared history; the main session goes on without you. Act as a read-only"
    " advisor: explain, compare options and answer questions about that work, but do not"
    " edit files, run commands that change anything, or continue the main task yourself."
    " When asked for a handback, give a short conclusion the main session can use."
)
CUT = " [...]"


def _request_key(who: str) -> Callable[[int], Any]:
    """The trigger key of *who*'s n-th model request (docs/side-scenario.md)."""
    return lambda n: ("request", who, n)


def fork_point(events: list[dict[str, Any]]) -> int:
    """Events before the open turn, if one is open; the whole log otherwise."""
    opened = None
    for index, event in enumerate(events):
        if event["type"] == "turn/start":
            opened = index
        elif event["type"] == "turn/end":
            opened = None
    return len(events) if opened is None else opened


def handback_request(cap: int) -> str:
    room = cap - len(heading("x" * 40))
    return (
        "Please hand back to the main session now: in at most "
        f"{room} characters of plain text, state what this side conversation concluded."
    )


def heading(child_id: str) -> str:
    return f"Note from side session {child_id}:\n"


def note(child_id: str, text: str, cap: int) -> tuple[str, bool]:
    """The merged text, at most cap code points; an over-cap answer keeps its head."""
    head = heading(child_id)
    if len(head) > cap // 4:
        head = "Side session note:\n"
    full = head + text
    if len(full) <= cap:
        return full, False
    return full[: cap - len(CUT)] + CUT, True


class SideRun(Driver):
    """One side.scenario.run."""

    def __init__(self, script: dict[str, Any], keys: list[Any]) -> None:
        super().__init__(script, keys)
        parent = script["parent"]
        self.options = parent.get("options", {})
        replies = script.get("replies", {})
        self.models = {
            who: ScriptedModel(replies.get(who, []), self.fire, _request_key(who))
            for who in ("parent", "child")
        }
        self.tools = ScriptedTools(self.options, lambda key: None)
        self.parent = Agent(
            parent["id"],
            parent.get("header", {}),
            parent.get("seed", []),
            self.options,
            self.models["parent"],
            self.tools,
            Hooks(),
        )
        self.child: Agent | None = None
        self.asked: set[int] = set()
        self.handback: str | None = None

    def _agent(self, who: str) -> Agent:
        agent = self.parent if who == "parent" else self.child
        if agent is None:
            raise HostError(NOT_FOUND, "no side session has been forked yet")
        return agent

    def act(self, index: int, step: dict[str, Any]) -> dict[str, Any]:
        seen: dict[str, Any] = {"fired": True, "parent": _seen(self.parent)}
        if self.child is not None:
            seen["child"] = _seen(self.child)
        action = step["do"]
        try:
            if action in ("send", "steer"):
                agent = self._agent(step.get("session", "parent"))
                content = [{"type": "text", "text": step["text"]}]
                (agent.send if action == "send" else agent.steer)(content)
            elif action == "cancel":
                self._agent(step.get("session", "parent")).cancel()
            elif action == "dispose":
                self._agent(step.get("session", "parent")).dispose()
            elif action == "fork":
                before = self.parent.session()
                self._fork()
                seen["source"] = {"before": before, "after": self.parent.session()}
            elif action == "askHandback":
                self._ask(step.get("cap", DEFAULT_CAP))
            elif action == "mergeBack":
                self._merge(step.get("cap", DEFAULT_CAP))
        except HostError as exc:
            seen["error"] = {"code": exc.code, "message": exc.message}
        return seen

    def _fork(self) -> None:
        if self.child is not None:
            raise HostError("DSH_INVALID_ARGUMENT", "this run has forked its side session already")
        if self.parent.status == "disposed":
            raise HostError("DSH_AGENT_DISPOSED", "the parent was disposed of")
        cut = fork_point(self.parent.events)
        header: dict[str, Any] = {
            key: copy.deepcopy(value)
            for key, value in self.parent.header.items()
            if key in ("version", "cwd")
        }
        header |= {"createdAt": now_ms(), "parentSession": self.parent.id, "seedLength": cut}
        child = Agent(
            self.script["child"],
            header,
            copy.deepcopy(self.parent.events[:cut]),
            self.options,
            self.models["child"],
            self.tools,
            Hooks(turn_closed=self._closed),
        )
        meta = {"purpose": "advisor-framing", "forkedFrom": self.parent.id, "atEvent": cut}
        child.append(
            "context/message",
            {"content": [{"type": "text", "text": FRAMING}], "source": dict(ADVISOR), "meta": meta},
        )
        self.child = child

    def _ask(self, cap: int) -> None:
        child = self._agent("child")
        record = child.send([{"type": "text", "text": handback_request(cap)}], dict(ADVISOR))
        self.asked.add(id(record))

    def _closed(self, record: Record | None, kind: str, texts: list[str]) -> None:
        if record is not None and id(record) in self.asked and kind == "completed" and texts:
            self.handback = texts[-1]

    def _merge(self, cap: int) -> None:
        if self.parent.status == "disposed":
            raise HostError("DSH_AGENT_DISPOSED", "the parent was disposed of")
        child = self._agent("child")
        if self.handback is None:
            raise HostError("DSH_SIDE_NO_HANDBACK", "the side session has not handed anything back")
        text, cut = note(child.id, self.handback, cap)
        meta = {"sideSession": child.id, "limit": cap, "unit": "code points", "cut": cut}
        self.parent.inject([{"type": "text", "text": text}], dict(SIDECHAT), meta, True)

    async def run(self) -> dict[str, Any]:
        await self.drive()
        out: dict[str, Any] = {"parent": self._report("parent", self.parent)}
        if self.child is not None:
            out["child"] = self._report("child", self.child)
        out["steps"] = self.outcomes
        return out

    def _report(self, who: str, agent: Agent) -> dict[str, Any]:
        return {
            "log": agent.session(),
            "requests": self.models[who].requests,
            "status": "disposed" if agent.status == "disposed" else "idle",
        }

    async def _settle(self) -> None:
        """Both sessions idle (or disposed) at once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SETTLE_SECONDS
        while True:
            await asyncio.sleep(0)
            agents = [a for a in (self.parent, self.child) if a is not None]
            if all(a.settled for a in agents):
                return
            for agent in agents:
                try:
                    await asyncio.wait_for(agent.when_idle(), max(deadline - loop.time(), 0.01))
                except TimeoutError:  # a reply that hangs with nothing to end it
                    agent.dispose()


def _seen(agent: Agent) -> dict[str, Any]:
    return {"status": agent.status, "logLength": len(agent.events)}


def run(args: dict[str, Any]) -> dict[str, Any]:
    keys = scripts.check_side(args)

    async def main() -> dict[str, Any]:
        return await SideRun(args, keys).run()

    return asyncio.run(main())
