"""One agent on its own asyncio loop: an inbox, turns, a session log (note 000's agent side).

Written from the note and docs/scenario.md only. send()/steer() freeze content, source and
contexts into one record; a claimed record passes the prompt-submit chain, and the allow it
returns is what the log gets: prefix contexts baked into the one prompt event before the
delimiter (with a model-hidden envelope), separate ones as their own context/message events
after it. Steering is drained before the next model call; steering still pending when the
turn ends becomes queued input again, unless the turn was cancelled, disposed of or stopped
for good, which drop it with its contexts. inject() is never an inbox record: in an open
turn it lands at the turn's next boundary, otherwise it is a one-shot turn of its own.
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tests.independent_host.errors import HostError
from tests.independent_host.surface import SURFACE_TYPES, fold

DELIMITER = "\n## My request:\n"
INVALID_MESSAGE = "DSH_AGENT_INVALID_MESSAGE"
DISPOSED = "DSH_AGENT_DISPOSED"
USER = {"kind": "user"}
IDENTITY = (
    "You are a coding assistant working for one person in {{cwd}}."
    " You run on {{provider}}/{{model}}."
)


def now_ms() -> int:
    return int(time.time() * 1000)


def _hostile(value: Any) -> bool:
    """A {"$hostile": KIND} marker stands for a value lossless JSON cannot hold (D-68)."""
    if isinstance(value, dict):
        return "$hostile" in value or any(_hostile(v) for v in value.values())
    if isinstance(value, list):
        return any(_hostile(v) for v in value)
    return False


def _blocks(content: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(content, list) or not all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in content
    ):
        raise HostError(INVALID_MESSAGE, f"{what} must be an array of typed blocks")
    return copy.deepcopy(content)


def _source(source: Any) -> dict[str, Any]:
    if source is None:
        return dict(USER)
    if not isinstance(source, dict) or not isinstance(source.get("kind"), str):
        raise HostError(INVALID_MESSAGE, "a source is an object with a string kind")
    return copy.deepcopy(source)


def _contexts(contexts: Any) -> list[dict[str, Any]]:
    if contexts is None:
        return []
    if not isinstance(contexts, list):
        raise HostError(INVALID_MESSAGE, "contexts must be an array")
    out = []
    for ctx in contexts:
        if not isinstance(ctx, dict):
            raise HostError(INVALID_MESSAGE, "a context is an object")
        if ctx.get("placement", "separate") not in ("separate", "prompt-prefix"):
            raise HostError(INVALID_MESSAGE, "a context's placement is separate or prompt-prefix")
        frozen = copy.deepcopy(ctx)
        frozen["content"] = _blocks(ctx.get("content"), "a context's content")
        frozen["source"] = _source(ctx.get("source"))
        out.append(frozen)
    return out


@dataclass(frozen=True)
class Record:
    """One inbox record: content, resolved source and contexts, frozen together when sent."""

    content: list[dict[str, Any]]
    source: dict[str, Any]
    contexts: list[dict[str, Any]]
    tag: Any = None


@dataclass(frozen=True)
class Injection:
    """A synthetic context: source and model-hidden meta, no contexts, never an inbox record."""

    content: list[dict[str, Any]]
    source: dict[str, Any]
    meta: Any
    has_meta: bool


@dataclass(frozen=True)
class Allow:
    content: list[dict[str, Any]]
    contexts: list[dict[str, Any]]


@dataclass(frozen=True)
class Block:
    reason: str


class ListenerFailure(Exception):
    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class ModelFailure(Exception):
    def __init__(self, message: str, code: str | None) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class Interrupted(Exception):
    """The turn was cancelled or its agent disposed of while the model or a tool ran."""


Next = Callable[[], Awaitable["Allow | Block"]]
Submit = Callable[["Agent", Record, Next], Awaitable["Allow | Block"]]


class Model(Protocol):
    """The host's model adapter: stream ("text", delta) pieces, then ("calls", [...])."""

    def stream(self, agent: Agent, request: dict[str, Any]) -> AsyncIterator[tuple[str, Any]]: ...


class Tools(Protocol):
    async def execute(self, agent: Agent, call: dict[str, Any]) -> tuple[list[Any], bool]: ...


@dataclass
class Hooks:
    """What the host around the agent listens to."""

    submit: Submit | None = None
    turn_stop: Callable[[int], str] = lambda turn: "none"
    queued: Callable[[Record, bool], None] = lambda record, steering: None
    appended: Callable[[dict[str, Any]], None] = lambda event: None
    turn_closed: Callable[[Record | None, str, list[str]], None] = lambda r, k, t: None


def system_prompt(options: dict[str, Any], cwd: str | None) -> str:
    """Identity, persona, then the sections by order, a blank line between them."""
    parts: list[tuple[int, int, str]] = [(-100, 0, IDENTITY)]
    if isinstance(options.get("persona"), str) and options["persona"]:
        parts.append((0, 1, options["persona"]))
    for index, section in enumerate(options.get("sections") or []):
        parts.append((int(section.get("order", 0)), 2 + index, section["text"]))
    parts.sort(key=lambda p: (p[0], p[1]))
    values = {
        "{{provider}}": options.get("provider", "mock"),
        "{{model}}": options.get("model", "scripted"),
        "{{cwd}}": cwd if cwd is not None else "an unnamed directory",
    }
    out = []
    for _, _, text in parts:
        for key, value in values.items():
            text = text.replace(key, value)
        out.append(text)
    return "\n\n".join(out)


def tool_schemas(options: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in sorted(options.get("tools") or [], key=lambda t: t["name"]):
        schema = {"name": tool["name"]}
        for key in ("description", "parameters"):
            if key in tool:
                schema[key] = copy.deepcopy(tool[key])
        out.append(schema)
    return out


def replay(header: dict[str, Any], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model messages of the log's current surface, one per surface event."""
    messages = []
    for event in fold({"header": header, "events": events})["events"]:
        data = event.get("data") if isinstance(event.get("data"), dict) else {}
        if event["type"] == "assistant/message":
            content = data.get("content") or []
            if not content:
                continue
            message: dict[str, Any] = {"role": "assistant", "content": copy.deepcopy(content)}
            if isinstance(data.get("provenance"), dict):
                message["provenance"] = copy.deepcopy(data["provenance"])
        elif event["type"] == "tool/result":
            block = {
                "type": "tool-result",
                "toolCallId": data.get("callId"),
                "content": copy.deepcopy(data.get("content", [])),
                "isError": bool(data.get("isError", False)),
            }
            message = {"role": "user", "content": [block]}
        else:
            message = {"role": "user", "content": copy.deepcopy(data.get("content", []))}
        messages.append(message)
    return messages


@dataclass
class _Turn:
    number: int
    record: Record | None
    texts: list[str] = field(default_factory=list)


class Agent:
    """An agent with an inbox and a turn loop; its log is its session."""

    def __init__(
        self,
        agent_id: str,
        header: dict[str, Any],
        seed: list[dict[str, Any]],
        options: dict[str, Any],
        model: Model,
        tools: Tools,
        hooks: Hooks,
    ) -> None:
        self.id = agent_id
        self.header = {**copy.deepcopy(header), "id": agent_id}
        self.header.setdefault("createdAt", now_ms())
        try:
            fold({"header": self.header, "events": seed})
        except HostError as exc:
            raise HostError("DSH_INVALID_EVENT", exc.message) from exc
        self.events: list[dict[str, Any]] = copy.deepcopy(seed)
        self.options = options
        self.model, self.tools, self.hooks = model, tools, hooks
        self.system = system_prompt(options, header.get("cwd"))
        self.schemas = tool_schemas(options)
        self._work: deque[Record | Injection] = deque()
        self._steering: list[Record] = []
        self._landing: list[Injection] = []
        self._turn: _Turn | None = None
        self._stop: str | None = None  # "aborted" or "disposed" once the open turn must end
        self._abort = asyncio.Event()
        self._disposed = False
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()
        self._settled.set()
        self._last_turn = self._seed_turns()

    # -- the log -------------------------------------------------------------------------

    def _seed_turns(self) -> int:
        last, open_turn = 0, None
        for event in self.events:
            data = event.get("data")
            turn = data.get("turn") if isinstance(data, dict) else None
            number = turn if isinstance(turn, int) else None
            if event["type"] == "turn/start":
                last = max(last, number or last + 1)
                open_turn = number or last
            elif event["type"] == "turn/end":
                open_turn = None
        if open_turn is not None:  # a crash left the seed's last turn open: close it
            self.append("turn/end", {"turn": open_turn, "reason": {"kind": "interrupted"}})
        return last

    def append(self, kind: str, data: dict[str, Any], provenance: list[int] | None = None) -> int:
        seq = len(self.events)
        event: dict[str, Any] = {"type": kind, "seq": seq, "time": now_ms(), "data": data}
        if kind in SURFACE_TYPES:
            event["surfaceOp"] = "append"
            if provenance is not None:
                event["sourceEventSeqs"] = provenance
        self.events.append(event)
        self.hooks.appended(event)
        return seq

    def session(self) -> dict[str, Any]:
        return {"header": copy.deepcopy(self.header), "events": copy.deepcopy(self.events)}

    # -- what a host sees ----------------------------------------------------------------

    @property
    def status(self) -> str:
        if self._disposed:
            return "disposed"
        return "running" if self._turn is not None or self._work else "idle"

    @property
    def turn_open(self) -> bool:
        return self._turn is not None

    @property
    def settled(self) -> bool:
        return self._settled.is_set()

    async def when_idle(self) -> None:
        await self._settled.wait()

    # -- host calls ----------------------------------------------------------------------

    def send(
        self, content: Any, source: Any = None, contexts: Any = None, tag: Any = None
    ) -> Record:
        return self._enqueue(content, source, contexts, tag, steer=False)

    def steer(self, content: Any, source: Any = None, contexts: Any = None) -> Record:
        return self._enqueue(content, source, contexts, None, steer=True)

    def _enqueue(self, content: Any, source: Any, contexts: Any, tag: Any, steer: bool) -> Record:
        if self._disposed:
            raise HostError(DISPOSED, "the agent was disposed of")
        if _hostile(content) or _hostile(source) or _hostile(contexts):
            raise HostError(INVALID_MESSAGE, "the message holds a value JSON cannot carry")
        record = Record(_blocks(content, "content"), _source(source), _contexts(contexts), tag)
        steering = steer and self.status == "running"
        self.hooks.queued(record, steering)
        if steering:
            self._steering.append(record)
        else:
            self._work.append(record)
            self._kick()
        return record

    def inject(
        self, content: Any, source: Any = None, meta: Any = None, has_meta: bool = False
    ) -> None:
        if self._disposed:
            raise HostError(DISPOSED, "the agent was disposed of")
        if _hostile(content) or _hostile(source) or _hostile(meta):
            raise HostError(INVALID_MESSAGE, "the injection holds a value JSON cannot carry")
        item = Injection(
            _blocks(content, "content"), _source(source), copy.deepcopy(meta), has_meta
        )
        if self._turn is not None:
            self._landing.append(item)
        else:
            self._work.append(item)
            self._kick()

    def cancel(self) -> None:
        """End the open turn (nothing to do between turns); its pending steering goes with it."""
        if self._disposed or self._turn is None:
            return
        self._stop = self._stop or "aborted"
        self._abort.set()

    def dispose(self) -> None:
        if self._disposed:
            return
        self._disposed = True
        self._work.clear()
        if self._turn is not None:
            self._stop = "disposed"
            self._abort.set()
        elif self._task is None:
            self._settled.set()

    # -- the loop ------------------------------------------------------------------------

    def _kick(self) -> None:
        self._settled.clear()
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        await asyncio.sleep(0)  # a real loop starts on its own tick, after the caller's code
        while self._work and not self._disposed:
            item = self._work.popleft()
            if isinstance(item, Injection):
                self._injection_turn(item)
            else:
                await self._message_turn(item)
            await asyncio.sleep(0)
        self._task = None
        self._settled.set()

    def _open(self, trigger: dict[str, Any], record: Record | None) -> _Turn:
        self._last_turn += 1
        self._stop, self._abort = None, asyncio.Event()
        self._turn = _Turn(self._last_turn, record)
        self.append("turn/start", {"turn": self._turn.number, "trigger": trigger})
        return self._turn

    def _close(self, reason: dict[str, Any]) -> None:
        turn = self._turn
        assert turn is not None
        self._land()
        self._turn = None
        self.append("turn/end", {"turn": turn.number, "reason": reason})
        self.hooks.turn_closed(turn.record, reason["kind"], turn.texts)

    def _injection_turn(self, item: Injection) -> None:
        self._open({"kind": "injection", "source": copy.deepcopy(item.source)}, None)
        self._write_injection(item)
        self._close({"kind": "completed"})

    def _write_injection(self, item: Injection) -> None:
        data: dict[str, Any] = {"content": item.content, "source": item.source}
        if item.has_meta:
            data["meta"] = item.meta
        self.append("context/message", data)

    def _land(self) -> None:
        """Injections made during the turn land at its boundary, in the order made."""
        while self._landing:
            self._write_injection(self._landing.pop(0))

    def _write_prompt(
        self, kind: str, content: list[Any], contexts: list[Any], source: Any
    ) -> None:
        prefix = [c for c in contexts if c.get("placement") == "prompt-prefix"]
        data: dict[str, Any] = {"content": copy.deepcopy(content), "source": copy.deepcopy(source)}
        if prefix:
            baked = [copy.deepcopy(b) for c in prefix for b in c["content"]]
            data["content"] = [*baked, {"type": "text", "text": DELIMITER}, *copy.deepcopy(content)]
            envelope = []
            for c in prefix:
                entry = {"source": copy.deepcopy(c["source"])}
                if "meta" in c:
                    entry["meta"] = copy.deepcopy(c["meta"])
                envelope.append(entry)
            data["envelope"] = {
                "displayContent": copy.deepcopy(content),
                "prefixContexts": envelope,
            }
        if kind == "steering/message":
            assert self._turn is not None
            data["turn"] = self._turn.number
        self.append(kind, data)
        for c in contexts:
            if c.get("placement") != "prompt-prefix":
                extra: dict[str, Any] = {"content": c["content"], "source": c["source"]}
                if "meta" in c:
                    extra["meta"] = c["meta"]
                self.append("context/message", copy.deepcopy(extra))

    async def _decide(self, record: Record) -> Allow | Block:
        async def default() -> Allow | Block:
            return Allow(record.content, record.contexts)

        if self.hooks.submit is None:
            return await default()
        return await self.hooks.submit(self, record, default)

    async def _message_turn(self, record: Record) -> None:
        turn = self._open({"kind": "message", "source": copy.deepcopy(record.source)}, record)
        try:
            decision = await self._decide(record)
        except ListenerFailure as exc:
            self._steering.clear()
            self._close({"kind": "error", "step": 0, "failure": _failure(exc.message, exc.code)})
            return
        if self._stop:
            return self._interrupted()
        if isinstance(decision, Block):
            data = {"content": record.content, "source": record.source, "reason": decision.reason}
            self.append("prompt/blocked", copy.deepcopy(data))
            self._close({"kind": "rejected", "reason": decision.reason})
            return
        self._write_prompt("user/message", decision.content, decision.contexts, record.source)
        step = 0
        while True:
            self._land()
            for steering in self._steering:
                self._write_prompt(
                    "steering/message", steering.content, steering.contexts, steering.source
                )
            self._steering = []
            step += 1
            try:
                calls = await self._model_step()
            except Interrupted:
                return self._interrupted()
            except ModelFailure as exc:
                self._steering.clear()
                self._close(
                    {"kind": "error", "step": step, "failure": _failure(exc.message, exc.code)}
                )
                return
            if calls:
                await self._tool_batch(calls)
                if self._stop:
                    return self._interrupted()
                if self.hooks.turn_stop(turn.number) == "stop":
                    self._steering.clear()
                    self._close({"kind": "completed", "stoppedBy": "turn-stop"})
                    return
                continue
            if self.hooks.turn_stop(turn.number) == "stop":
                self._steering.clear()
            late, self._steering = self._steering, []
            self._work.extendleft(reversed(late))  # late steering: queued input, same record
            self._close({"kind": "completed"})
            return

    def _interrupted(self) -> None:
        self._steering.clear()
        self._close({"kind": self._stop or "aborted"})

    def _request(self) -> dict[str, Any]:
        request: dict[str, Any] = {
            "provider": self.options.get("provider", "mock"),
            "model": self.options.get("model", "scripted"),
            "messages": replay(self.header, self.events),
        }
        if self.system:
            request["system"] = self.system
        if self.schemas:
            request["tools"] = copy.deepcopy(self.schemas)
        request["sessionId"] = self.id
        return request

    async def _model_step(self) -> list[dict[str, Any]]:
        assert self._turn is not None
        chunks: list[int] = []
        text: list[str] = []
        calls: list[dict[str, Any]] = []
        stream = self.model.stream(self, self._request())
        async for kind, value in stream:
            if self._stop:
                raise Interrupted
            if kind == "text":
                text.append(value)
                chunks.append(self.append("assistant/chunk", {"delta": value}))
            else:
                calls = value
        if self._stop:
            raise Interrupted
        content: list[dict[str, Any]] = []
        if text:
            content.append({"type": "text", "text": "".join(text)})
            self._turn.texts.append("".join(text))
        for call in calls:
            content.append(
                {
                    "type": "tool-call",
                    "id": call["id"],
                    "name": call["name"],
                    "arguments": call["arguments"],
                }
            )
        provenance = {
            "provider": self.options.get("provider", "mock"),
            "model": self.options.get("model", "scripted"),
        }
        self.append("assistant/message", {"content": content, "provenance": provenance}, chunks)
        return calls

    async def _tool_batch(self, calls: list[dict[str, Any]]) -> None:
        for call in calls:
            seq = self.append(
                "tool/call",
                {"callId": call["id"], "name": call["name"], "arguments": call["arguments"]},
            )
            data: dict[str, Any] = {"callId": call["id"]}
            if self._stop:
                data |= {
                    "content": [{"type": "text", "text": "Not run: the turn was interrupted."}],
                    "isError": True,
                    "error": {"name": "AbortError", "code": "TOOL_ABORTED"},
                }
            else:
                content, failed = await self.tools.execute(self, call)
                data |= {"content": content, "isError": failed}
            self.append("tool/result", data, [seq])

    async def hang(self) -> None:
        """A model reply that never finishes by itself: wait for the cancel or the disposal."""
        await self._abort.wait()
        raise Interrupted


def _failure(message: str, code: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"message": message}
    if code is not None:
        out["code"] = code
    return out
