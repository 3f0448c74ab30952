"""The seed's message-ownership invariants, checked on a scenario's outputs alone.

Nothing here imports the model: each check reads the script (who sent what, with which
contexts) and the observable result (captured requests, durable log, step outcomes), and
restates one sentence of seed 000 "Message ownership" / "Decision" with the standard library
and the independent fold and replay of ``agent_support``.  Texts are unique per owner
(conformance/scenario_programs.py), so ``ctx-3-1`` in the log is record 3's first context.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.conformance.agent_support import DELIM, replay

PROMPT_EVENTS: Final = frozenset({"user/message", "steering/message"})
Event = Mapping[str, Any]


@frozen
class Record:
    """One accepted send/steer: its step, text, contexts and how the host saw the agent."""

    index: int
    action: str
    text: str
    contexts: tuple[Mapping[str, Any], ...]
    status: str

    @property
    def prefix(self) -> list[str]:
        return [c["content"][0]["text"] for c in self.contexts if _is_prefix(c)]

    @property
    def separate(self) -> list[str]:
        return [c["content"][0]["text"] for c in self.contexts if not _is_prefix(c)]

    @property
    def steered(self) -> bool:
        """Accepted as steering: steer() while the agent was running (INBOX-005)."""
        return self.action == "steer" and self.status == "running"


def _is_prefix(context: Mapping[str, Any]) -> bool:
    return context.get("placement") == "prompt-prefix"


def records(script: Mapping[str, Any], result: Mapping[str, Any]) -> list[Record]:
    """The records the agent accepted: fired send/steer steps without an error."""
    out = []
    for index, (step, outcome) in enumerate(zip(script["steps"], result["steps"], strict=True)):
        if step["do"] not in {"send", "steer"} or not outcome["fired"] or "error" in outcome:
            continue
        out.append(
            Record(
                index,
                step["do"],
                step["text"],
                tuple(step.get("contexts", ())),
                outcome["status"],
            )
        )
    return out


def texts(blocks: Sequence[Any]) -> list[str]:
    return [b["text"] for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]


def display(event: Event) -> list[Any]:
    data = event["data"]
    envelope = data.get("envelope")
    content: list[Any] = envelope["displayContent"] if envelope else data["content"]
    return content


def baked(event: Event) -> list[str]:
    """The texts a prompt event carries before its delimiter (its prefix blocks)."""
    content = event["data"]["content"]
    return texts(content[: content.index(DELIM)]) if DELIM in content else []


def run_after(events: Sequence[Event], position: int) -> list[str]:
    """Texts of the consecutive context/message events right after *position*."""
    out: list[str] = []
    for event in events[position + 1 :]:
        if event["type"] != "context/message":
            break
        out += texts(event["data"]["content"])
    return out


def context_texts(events: Sequence[Event]) -> Iterator[tuple[int, str]]:
    for position, event in enumerate(events):
        if event["type"] == "context/message":
            for value in texts(event["data"]["content"]):
                yield position, value


def owner_prompts(events: Sequence[Event], record: Record) -> list[int]:
    """Positions of prompt events carrying *record*: its text shown, its prefix baked, or
    its separate contexts right after (a rewrite may have replaced the text)."""
    return [
        p
        for p, e in enumerate(events)
        if e["type"] in PROMPT_EVENTS
        and (
            texts(display(e)) == [record.text]
            or set(record.prefix) & set(baked(e))
            or set(record.separate) & set(run_after(events, p))
        )
    ]


def is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(any(x == y for y in it) for x in needle)


# --- the invariants ---------------------------------------------------------------------


def one_delimiter_after_all_prefix_blocks(events: Sequence[Event]) -> None:
    """ENV-050/051/053/054: an enveloped prompt event is prefix blocks, one DELIM, display."""
    for event in events:
        data = event["data"]
        if event["type"] not in PROMPT_EVENTS:
            if isinstance(data, Mapping) and isinstance(data.get("content"), list):
                assert DELIM not in data["content"], f"a delimiter outside a prompt: {event}"
            continue
        content = data["content"]
        envelope = data.get("envelope")
        if envelope is None:
            assert DELIM not in content, f"a delimiter without an envelope: {event}"
            continue
        shown = envelope["displayContent"]
        assert content.count(DELIM) == 1, f"not exactly one delimiter: {event}"
        cut = content.index(DELIM)
        assert content[cut + 1 :] == shown, f"the display does not follow the delimiter: {event}"
        assert cut == len(envelope["prefixContexts"]) >= 1, f"prefix blocks vs contexts: {event}"


def replay_equals_each_request(result: Mapping[str, Any], agent_id: str) -> None:
    """ENV-058: every captured request is the log's surface before that step, re-derived."""
    rebuilt = replay(result["log"]["events"], agent_id)
    assert result["requests"] == rebuilt, "a captured request differs from its replay"


def no_context_without_its_message(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-021: a record's context is written only right after its own prompt event."""
    for record in found:
        prompts = owner_prompts(events, record)
        assert len(prompts) <= 1, f"record {record.text} was written twice"
        allowed = set(run_after(events, prompts[0])) if prompts else set()
        for position, value in context_texts(events):
            if value in record.separate:
                assert value in allowed, (
                    f"{value} at {position} without its message {record.text} before it"
                )
        if not prompts:
            for event in events:
                if event["type"] in PROMPT_EVENTS:
                    assert not set(record.prefix) & set(baked(event)), record.text


def contexts_travel_with_their_message(
    events: Sequence[Event], found: Sequence[Record], kinds: frozenset[str] = PROMPT_EVENTS
) -> None:
    """INBOX-010, ENV-055, ENV-056: a written message has all its contexts, split by placement.

    *kinds* limits the check to prompt events of those types (``steering/message``: ENV-060).
    """
    for record in found:
        prompts = owner_prompts(events, record)
        if not prompts or events[prompts[0]]["type"] not in kinds:
            continue
        event = events[prompts[0]]
        assert is_subsequence(record.prefix, baked(event)), (
            f"{record.text}: prefix contexts {record.prefix} not baked in order: {event}"
        )
        assert is_subsequence(record.separate, run_after(events, prompts[0])), (
            f"{record.text}: separate contexts {record.separate} do not follow it in order"
        )


def late_steering_keeps_its_contexts(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-020: steering that becomes queued input keeps its record, contexts included."""
    for record in found:
        if not record.steered:
            continue
        for position in owner_prompts(events, record):
            event = events[position]
            if event["type"] != "user/message":
                continue
            assert is_subsequence(record.prefix, baked(event)), f"{record.text} lost its prefix"
            assert is_subsequence(record.separate, run_after(events, position)), (
                f"{record.text} lost its separate contexts"
            )


def turns(events: Sequence[Event]) -> Iterator[list[Event]]:
    """The events of each turn, ``turn/start`` to ``turn/end`` inclusive."""
    current: list[Event] | None = None
    for event in events:
        if event["type"] == "turn/start":
            current = []
        if current is not None:
            current.append(event)
        if event["type"] == "turn/end" and current is not None:
            yield current
            current = None


def block_writes_nothing(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-011/013: a blocked prompt leaves prompt/blocked and a rejected turn, nothing else."""
    blocked = set()
    for turn in turns(events):
        kinds = [e["type"] for e in turn]
        if "prompt/blocked" not in kinds:
            continue
        event = turn[kinds.index("prompt/blocked")]
        blocked.update(texts(event["data"]["content"]))
        for forbidden in ("user/message", "step/start"):
            assert forbidden not in kinds, f"a blocked turn wrote {forbidden}: {kinds}"
        reason = turn[-1]["data"]["reason"]
        assert reason == {"kind": "rejected", "reason": event["data"]["reason"]}, reason
    for record in found:
        if record.text not in blocked:
            continue
        pieces = set(record.prefix) | set(record.separate)
        for event in events:
            if event["type"] in PROMPT_EVENTS | {"context/message"}:
                carried = set(texts(event["data"]["content"]))
                assert not pieces & carried, f"blocked {record.text}'s context was written"
