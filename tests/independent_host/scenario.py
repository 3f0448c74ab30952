"""scenario.run: one scripted conversation on this host's own loop (docs/scenario.md).

The host builds a fresh agent, wires its own hooks (the model adapter, the tools, the
outermost prompt-submit listener, an agent/queued listener, a log append observer) to the
script's triggers, runs the start steps, then waits for the agent to settle between the
idle steps, and reports what it observed.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from tests.independent_host import prepare as preparation
from tests.independent_host import scripts
from tests.independent_host.agentloop import (
    Agent,
    Allow,
    Block,
    Hooks,
    ListenerFailure,
    ModelFailure,
    Next,
    Record,
)
from tests.independent_host.errors import HostError

SETTLE_SECONDS = 20.0
EXHAUSTED = "DSH_AGENT_SCRIPT_EXHAUSTED"


def arguments_text(value: Any) -> str:
    if value is None:
        return "{}"
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


class ScriptedModel:
    """The host's model adapter: record the request, run the steps on it, then answer."""

    def __init__(
        self, replies: list[dict[str, Any]], fire: Callable[[Any], None], key: Callable[[int], Any]
    ) -> None:
        self.replies, self.fire, self.key = replies, fire, key
        self.requests: list[dict[str, Any]] = []

    async def stream(self, agent: Agent, request: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]:
        self.requests.append(copy.deepcopy(request))
        n = len(self.requests)
        reply = self.replies[n - 1] if n <= len(self.replies) else None
        if reply is not None and "partial" in reply:
            yield "text", reply["partial"]
        self.fire(self.key(n))
        await asyncio.sleep(0)
        if reply is None:
            raise ModelFailure(f"the script has no reply {n}", EXHAUSTED)
        if reply.get("hang"):
            await agent.hang()
        if "error" in reply:
            raise ModelFailure(reply["error"], reply.get("code"))
        if reply.get("text"):
            yield "text", reply["text"]
        calls = [
            {"id": c["id"], "name": c["name"], "arguments": arguments_text(c.get("arguments"))}
            for c in reply.get("toolCalls", [])
        ]
        if calls:
            yield "calls", calls


class ScriptedTools:
    """The host's tools: each returns its declared result; running one fires its trigger."""

    def __init__(self, options: dict[str, Any], fire: Callable[[Any], None]) -> None:
        self.tools = {t["name"]: t for t in options.get("tools", [])}
        self.fire = fire

    async def execute(self, agent: Agent, call: dict[str, Any]) -> tuple[list[Any], bool]:
        self.fire(("toolCall", call["id"]))
        await asyncio.sleep(0)
        tool = self.tools[call["name"]]
        result = tool.get("result", [{"type": "text", "text": "ok"}])
        return copy.deepcopy(result), bool(tool.get("isError", False))


def listener_chain(
    listeners: list[dict[str, Any]], count: Callable[[], int]
) -> Callable[[Record, Next], Awaitable[Allow | Block]]:
    """The script's prompt-submit listeners, first = outermost, each one a closure on next()."""
    chain = [lis for lis in listeners if lis.get("event", "prompt-submit") == "prompt-submit"]

    async def run(index: int, record: Record, last: Next) -> Allow | Block:
        if index == len(chain):
            return await last()
        lis = chain[index]

        async def nxt() -> Allow | Block:
            return await run(index + 1, record, last)

        if "submission" in lis and lis["submission"] != count():
            return await nxt()
        kind = lis["kind"]
        if kind == "pass":
            return await nxt()
        if kind == "allow":
            content = lis.get("content", record.content)
            # an allow that names no contexts keeps the record's own (this host's reading)
            contexts = lis.get("additionalContexts", record.contexts)
            return Allow(copy.deepcopy(content), copy.deepcopy(contexts))
        if kind == "block":
            return Block(lis.get("reason", ""))
        if kind == "throw":
            raise ListenerFailure(lis.get("message", "listener failed"), lis.get("code"))
        decision = await nxt()
        if not isinstance(decision, Allow):
            return decision
        if kind == "rewrite":
            return Allow(copy.deepcopy(lis["content"]), decision.contexts)
        if kind == "drop-contexts":
            return Allow(decision.content, [])
        added = copy.deepcopy(lis["contexts"])
        if lis.get("position", "prepend") == "append":
            return Allow(decision.content, [*decision.contexts, *added])
        return Allow(decision.content, [*added, *decision.contexts])

    async def start(record: Record, last: Next) -> Allow | Block:
        return await run(0, record, last)

    return start


def _content(step: dict[str, Any]) -> Any:
    return step["content"] if "content" in step else [{"type": "text", "text": step.get("text")}]


class Driver:
    """A script's steps fired by their trigger keys, and the idle points driven in order:
    what scenario.run and side.scenario.run share."""

    def __init__(self, script: dict[str, Any], keys: list[Any]) -> None:
        self.script, self.keys = script, keys
        self.steps: list[dict[str, Any]] = script["steps"]
        self.outcomes: list[dict[str, Any]] = [{"fired": False} for _ in self.steps]

    def act(self, index: int, step: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def _settle(self) -> None:
        raise NotImplementedError

    def fire(self, key: Any) -> None:
        for i, step in enumerate(self.steps):
            if self.keys[i] == key and not self.outcomes[i]["fired"]:
                self.outcomes[i] = self.act(i, step)

    async def drive(self) -> None:
        """Fire "start", then settle and fire each idle point up to the script's last."""
        self.fire("start")
        last = max([k[1] for k in self.keys if k != "start" and k[0] == "idle"], default=0)
        for k in range(1, last + 2):
            await self._settle()
            if k <= last:
                self.fire(("idle", k))


class Run(Driver):
    """One scenario.run."""

    def __init__(self, script: dict[str, Any], keys: list[Any]) -> None:
        super().__init__(script, keys)
        self.submissions: list[dict[str, Any]] = []
        self.queued: list[dict[str, Any]] = []
        self.turn_stop = [
            lis for lis in script.get("listeners", []) if lis.get("event") == "turn-stop"
        ]
        agent = script["agent"]
        options = agent.get("options", {})
        self.model = ScriptedModel(script.get("replies", []), self.fire, lambda n: ("request", n))
        chain = listener_chain(script.get("listeners", []), lambda: len(self.submissions))

        async def submit(owner: Agent, record: Record, last: Next) -> Allow | Block:
            self.submissions.append(
                {"content": copy.deepcopy(record.content), "source": copy.deepcopy(record.source)}
            )
            self.fire(("submit", len(self.submissions)))
            return await chain(record, last)

        hooks = Hooks(
            submit=submit,
            turn_stop=self._turn_stop,
            queued=self._queued,
            appended=self._appended,
        )
        self.agent = Agent(
            agent["id"],
            agent.get("header", {}),
            agent.get("seed", []),
            options,
            self.model,
            ScriptedTools(options, self.fire),
            hooks,
        )

    def _turn_stop(self, turn: int) -> str:
        for lis in self.turn_stop:
            if lis["kind"] == "stop" and lis.get("turn", turn) == turn:
                return "stop"
        return "none"

    def _queued(self, record: Record, steering: bool) -> None:
        self.queued.append(
            {
                "content": copy.deepcopy(record.content),
                "source": copy.deepcopy(record.source),
                "contexts": copy.deepcopy(record.contexts),
                "steering": steering,
            }
        )

    def _appended(self, event: dict[str, Any]) -> None:
        if event["type"] == "turn/end":
            turn = event["data"]["turn"]
            asyncio.get_running_loop().call_soon(self.fire, ("turnEnd", turn))

    def _seen(self) -> dict[str, Any]:
        return {"fired": True, "status": self.agent.status, "logLength": len(self.agent.events)}

    def act(self, index: int, step: dict[str, Any]) -> dict[str, Any]:
        seen = self._seen()
        agent, action = self.agent, step["do"]
        try:
            if action in ("send", "steer"):
                content, contexts = _content(step), step.get("contexts")
                if "prepared" in step:
                    earlier = self.outcomes[step["prepared"]].get("prepared")
                    if earlier is None:
                        raise HostError(scripts.UNREACHABLE, "the prepare step it names failed")
                    content, contexts = earlier["content"], earlier["contexts"]
                verb = agent.send if action == "send" else agent.steer
                verb(content, step.get("source"), contexts)
            elif action == "inject":
                agent.inject(_content(step), step.get("source"), step.get("meta"), "meta" in step)
            elif action == "cancel":
                agent.cancel()
            elif action == "dispose":
                agent.dispose()
            elif action == "prepare":
                seen["prepared"] = self._prepare(step)
        except HostError as exc:
            seen["error"] = {"code": exc.code, "message": exc.message}
        return seen

    def _prepare(self, step: dict[str, Any]) -> dict[str, Any]:
        store = copy.deepcopy(self.script.get("sessions", {}))
        store[self.agent.id] = self.agent.session()
        out = preparation.prepare(
            {
                "target": {"id": step.get("target", self.agent.id)},
                "content": _content(step),
                "references": step["references"],
                "sessions": store,
            }
        )
        return {"content": out["content"], "contexts": out["contexts"]}

    async def run(self) -> dict[str, Any]:
        await self.drive()
        await asyncio.sleep(0)
        return {
            "requests": self.model.requests,
            "log": self.agent.session(),
            "steps": self.outcomes,
            "status": "disposed" if self.agent.status == "disposed" else "idle",
            "submissions": self.submissions,
            "queued": self.queued,
        }

    async def _settle(self) -> None:
        try:
            await asyncio.wait_for(self.agent.when_idle(), SETTLE_SECONDS)
        except TimeoutError:  # a reply that hangs with nothing to end it: give up on it
            self.agent.dispose()
            await self.agent.when_idle()
        await asyncio.sleep(0)


def run(args: dict[str, Any]) -> dict[str, Any]:
    keys = scripts.check_scenario(args)
    holder: list[Run] = []

    async def main() -> dict[str, Any]:
        holder.append(Run(args, keys))
        return await holder[0].run()

    return asyncio.run(main())
