"""Helpers for the agent conformance tests, written independently of the model code.

Nothing here imports ``dsh_conformance.model``: the expected bytes of the placement split,
the surface fold and the request replay are restated with the standard library from the
seed and research note B (§1.4, §2.9, §2.13), so a model bug cannot hide by agreeing with
itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_conformance.adapters.client import Implementation

DELIM_TEXT: Final = "\n\n## My request:\n"
DELIM: Final = {"type": "text", "text": DELIM_TEXT}
#: Event types of the seed era; placement adds none (ENV-052).
SEED_EVENT_TYPES: Final = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "user/message",
        "prompt/blocked",
        "context/message",
        "steering/message",
        "assistant/chunk",
        "assistant/message",
        "tool/call",
        "tool/result",
        "request/header",
    }
)
USER: Final = {"kind": "user"}
SURFACE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "context/message", "steering/message"}
)

_ids = itertools.count(1)


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def plugin(name: str) -> dict[str, str]:
    return {"kind": "plugin", "plugin": name}


def context(
    body: str, *, placement: str | None = None, meta: Any = None, producer: str = "ctx"
) -> dict[str, Any]:
    """A HookContext ``{source, content, placement?, meta?}`` with one text block."""
    out: dict[str, Any] = {"source": plugin(producer), "content": text(body)}
    if placement is not None:
        out["placement"] = placement
    if meta is not None:
        out["meta"] = meta
    return out


class AgentHandle:
    """One agent of an implementation: ``handle.call("agent.send", content=...)``."""

    def __init__(self, impl: Implementation, agent_id: str) -> None:
        self.impl = impl
        self.id = agent_id

    def call(self, op: str, /, **args: Any) -> Any:
        return self.impl.call(op, agent=self.id, **args)

    def error_code(self, op: str, /, **args: Any) -> str | None:
        return self.impl.error_code(op, agent=self.id, **args)

    def run(self) -> int:
        steps: int = self.call("agent.run")["steps"]
        return steps

    def step(self) -> str | None:
        name: str | None = self.call("agent.step")["step"]
        return name

    def events(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = self.call("agent.log")["events"]
        return events

    def types(self) -> list[str]:
        return [e["type"] for e in self.events()]

    def requests(self) -> list[dict[str, Any]]:
        requests: list[dict[str, Any]] = self.call("agent.requests")
        return requests

    def notifications(self) -> list[dict[str, Any]]:
        notes: list[dict[str, Any]] = self.call("agent.notifications")
        return notes

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.call("agent.state")
        return state


def new_agent(impl: Implementation, prefix: str = "agent", **create: Any) -> AgentHandle:
    """Create a fresh agent with a unique id (tests share one implementation)."""
    agent_id = f"{prefix}-{next(_ids)}"
    if "header" in create:
        create["header"] = {**create["header"], "id": agent_id}
    result = impl.call("agent.create", id=agent_id, **create)
    return AgentHandle(impl, result["agent"])


def of_type(events: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [e for e in events if e["type"] == kind]


# --- independent placement oracle (research note B §2.9) ----------------------------------


def expected_prompt_data(
    content: list[Any], source: Any, contexts: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The prompt event data and separate context data the seed-era split produces."""
    prefix = [c for c in contexts if c.get("placement") == "prompt-prefix"]
    separate = []
    for c in contexts:
        if c.get("placement") == "prompt-prefix":
            continue
        data = {"content": c["content"], "source": c["source"]}
        if "meta" in c:
            data["meta"] = c["meta"]
        separate.append(data)
    if not prefix:
        return {"content": content, "source": source}, separate
    baked: list[Any] = []
    for c in prefix:
        baked += list(c["content"])
    baked.append(DELIM)
    baked += list(content)
    prefix_contexts = []
    for c in prefix:
        entry = {"source": c["source"]}
        if "meta" in c:
            entry["meta"] = c["meta"]
        prefix_contexts.append(entry)
    envelope = {"displayContent": content, "prefixContexts": prefix_contexts}
    return {"content": baked, "source": source, "envelope": envelope}, separate


# --- independent surface fold and replay (research note B §1.4, §2.13) --------------------


def surface(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The current surface: append pushes, replace swaps a seq range of current nodes."""
    nodes: list[Mapping[str, Any]] = []
    for event in events:
        if event["type"] not in SURFACE_TYPES:
            continue
        op: Any = event.get("surfaceOp")
        if op == "append":
            nodes.append(event)
            continue
        seqs = [n["seq"] for n in nodes]
        lo, hi = seqs.index(op["start"]), seqs.index(op["end"])
        nodes[lo : hi + 1] = [event]
    return nodes


def derive(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Model messages of the current surface: append pushes, replace splices a range."""
    nodes = surface(events)
    out: list[dict[str, Any]] = []
    for node in nodes:
        data = node["data"]
        kind = node["type"]
        if kind in {"user/message", "context/message", "steering/message"}:
            out.append({"role": "user", "content": data["content"]})
        elif kind == "assistant/message":
            if data["content"]:
                message = {"role": "assistant", "content": data["content"]}
                if "provenance" in data:  # the log's own field, when it keeps one
                    message["provenance"] = data["provenance"]
                out.append(message)
        else:
            out.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": data.get("callId"),
                            "content": data.get("content"),
                            "isError": data.get("isError", False),
                        }
                    ],
                }
            )
    return out


def replay(events: Sequence[Mapping[str, Any]], session_id: str) -> list[dict[str, Any]]:
    """Every step's request rebuilt from the log: header in force + derive(prefix)."""
    requests = []
    header: Mapping[str, Any] | None = None
    for index, event in enumerate(events):
        if event["type"] == "request/header":
            header = (event.get("data") or {}).get("header") or {}
        if event["type"] != "step/start":
            continue
        step_header = header
        after = events[index + 1] if index + 1 < len(events) else None
        if after is not None and after["type"] == "request/header":
            step_header = (after.get("data") or {}).get("header") or {}
        assert step_header is not None, "a step without a request header"
        config = step_header.get("config") or {}
        request: dict[str, Any] = {
            "provider": config.get("provider"),
            "model": config.get("model"),
            "messages": derive(events[:index]),
        }
        for key in ("system", "tools"):
            if key in step_header:
                request[key] = step_header[key]
        request["sessionId"] = session_id
        requests.append(request)
    return requests


# --- what the model sees (issue 25, D-195, D-196) ------------------------------------------

#: The words of the request delimiter the note names ("## My request: delimiter").
DELIM_WORDS: Final = "## My request:"


def visible(content: Sequence[Any]) -> list[Any]:
    """*content* as the model reads it: text blocks run together (one item per character),
    any other block one item.  Two contents the model reads alike are equal here, however
    their text is split into blocks (D-195)."""
    out: list[Any] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            out.extend(str(block.get("text", "")))
        else:
            out.append(("block", repr(block)))
    return out


def baked_as_the_note_says(
    content: Sequence[Any], prefix: Sequence[Mapping[str, Any]], prompt: Sequence[Any]
) -> bool:
    """ENV-050 (seed): the content the model sees is the prefix contexts' content, then
    the ``## My request:`` delimiter (its words, any surrounding whitespace), then the
    effective prompt.  Block layout is free (D-195) and so is the order of several prefix
    contexts, which the note never names (D-196)."""
    seen = visible(content)
    tail = visible(prompt)
    if len(seen) < len(tail) or seen[len(seen) - len(tail) :] != tail:
        return False
    body = seen[: len(seen) - len(tail)]
    orders = itertools.permutations(prefix) if len(prefix) <= 5 else [tuple(prefix)]
    for order in orders:
        head = visible([b for c in order for b in c.get("content") or ()])
        middle = body[len(head) :]
        if body[: len(head)] != head or not all(isinstance(x, str) for x in middle):
            continue
        if "".join(middle).strip(" \t\n\r") == DELIM_WORDS:
            return True
    return False


def prefix_text(content: Sequence[Any], prompt: Sequence[Any]) -> str | None:
    """The text the model reads before the delimiter of a baked prompt, or None when the
    content does not end with the delimiter words and *prompt* (ENV-065)."""
    seen = visible(content)
    tail = visible(prompt)
    if len(seen) < len(tail) or seen[len(seen) - len(tail) :] != tail:
        return None
    body = "".join(x if isinstance(x, str) else "\ufffc" for x in seen[: len(seen) - len(tail)])
    stripped = body.rstrip(" \t\n\r")
    if not stripped.endswith(DELIM_WORDS):
        return None
    return stripped[: len(stripped) - len(DELIM_WORDS)]


def same_items(actual: Sequence[Any], expected: Sequence[Any]) -> bool:
    """Equal as multisets: the same items in any order (D-196)."""
    rest = list(expected)
    for item in actual:
        if item not in rest:
            return False
        rest.remove(item)
    return not rest
