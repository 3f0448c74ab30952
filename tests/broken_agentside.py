"""Broken implementations for the agent/side areas (issue 11 items 7-9).

Each wraps the reference model and breaks exactly one invariant the suite could not see
before; tests/test_broken_agentside.py checks each is blamed on exactly its ids.
Selectable as ``python:broken_agentside:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fauxmplementations import _Broken


class RawMentionPrompt(_Broken):
    """A host that prepares and sends the raw Markdown mention instead of the readable
    prompt (issue 11 item 7): ``prepare`` puts each ``@label`` back as ``@[label](uri)``."""

    name = "raw mention sent as the prompt"

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        prepared = dict(self.reference.call("prepare", args))
        content = []
        for block in prepared["content"]:
            if block.get("type") == "text":
                raw = block["text"]
                for ref in args.get("references", []):
                    label = ref.get("label", ref["sessionId"])
                    mention = self.reference.call(
                        "mention.format", {"sessionId": ref["sessionId"], "label": label}
                    )
                    raw = raw.replace("@" + label, mention)
                block = {**block, "text": raw}
            content.append(block)
        prepared["content"] = content
        return prepared


def raw_mention() -> RawMentionPrompt:
    return RawMentionPrompt()


def _prompt_texts(log: Mapping[str, Any]) -> dict[int, list[Any]]:
    """The logged (model-visible) content of each prompt event, by seq."""
    return {
        e["seq"]: e["data"]["content"]
        for e in log["events"]
        if e["type"] in ("user/message", "steering/message")
    }


class DisplayShowsSnapshot(_Broken):
    """A host view that shows the whole model content of a prefixed prompt (snapshot and
    delimiter included) as the user message (issue 11 item 8, V-20); the title is right."""

    name = "display shows the snapshot"

    def op_agent_display(self, args: Mapping[str, Any]) -> Any:
        view = self.reference.call("agent.display", args)
        raw = _prompt_texts(self.reference.call("agent.log", {"agent": args.get("agent")}))
        messages = [
            {**m, "content": raw.get(m["seq"], m["content"])} if m["role"] == "user" else m
            for m in view["messages"]
        ]
        return {**view, "messages": messages}


class TitleFromSnapshot(_Broken):
    """A title derived from the first prompt's model content, snapshot included (issue 11
    item 8, V-18); the messages are right."""

    name = "title from the snapshot"

    def op_agent_display(self, args: Mapping[str, Any]) -> Any:
        view = self.reference.call("agent.display", args)
        raw = _prompt_texts(self.reference.call("agent.log", {"agent": args.get("agent")}))
        for content in raw.values():
            whole = "".join(b.get("text", "") for b in content if b.get("type") == "text")
            line = whole.strip().split("\n", 1)[0].strip()
            if line:
                return {**view, "title": line[:80]}
        return view


def display_snapshot() -> DisplayShowsSnapshot:
    return DisplayShowsSnapshot()


def title_snapshot() -> TitleFromSnapshot:
    return TitleFromSnapshot()


class LateSettlementEnqueues(_Broken):
    """A host that, when a cancelled preparation's read settles late, enqueues the message
    anyway (issue 11 item 9, PREP-006)."""

    name = "late settlement enqueues"

    def op_agent_submit(self, args: Mapping[str, Any]) -> Any:
        result = self.reference.call("agent.submit", args)
        if result["enqueued"] or not result["lateSettled"]:
            return result
        late = {k: v for k, v in dict(args["prepare"]).items() if k != "cancelAt"}
        return self.reference.call("agent.submit", {**args, "prepare": late})


def late_settlement() -> LateSettlementEnqueues:
    return LateSettlementEnqueues()
