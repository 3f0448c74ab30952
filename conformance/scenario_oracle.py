"""The seed's message-ownership invariants, checked on a scenario's outputs alone.

Nothing here imports the model: each check reads the script (who sent what, with which
contexts) and the observable result (captured requests, durable log, step outcomes), and
restates one sentence of seed 000 "Message ownership" / "Decision" with the standard library
and the independent fold and replay of ``agent_support``.  Texts are unique per owner
(conformance/scenario_programs.py), so ``ctx-3-1`` in the log is record 3's first context.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from attrs import frozen

from dsh_conformance.conformance.agent_support import DELIM, DELIM_WORDS, prefix_text, replay
from dsh_conformance.conformance.typed_sources import string_values

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


def baked(event: Event) -> str:
    """The text the model reads before a prompt event's delimiter: its prefix contexts,
    in any block layout (D-195); "" for a prompt event without a delimiter."""
    data = event["data"]
    if not data.get("envelope"):
        return ""
    return prefix_text(data["content"], display(event)) or ""


def carried_by(events: Sequence[Event], position: int, wanted: Sequence[str]) -> list[str]:
    """The texts of *wanted* the prompt event at *position* does not carry: neither baked
    into it nor in a context/message right after it."""
    inside, after = baked(events[position]), run_after(events, position)
    return [t for t in wanted if t not in after and not (t and t in inside)]


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
            or any(t and t in baked(e) for t in record.prefix)
            or set(record.separate) & set(run_after(events, p))
        )
    ]


def is_subsequence(needle: Sequence[str], hay: Sequence[str]) -> bool:
    it = iter(hay)
    return all(any(x == y for y in it) for x in needle)


# --- the invariants ---------------------------------------------------------------------


def _contents(
    events: Sequence[Event],
) -> Iterator[tuple[Event, list[Any], Mapping[str, Any] | None]]:
    """(event, content blocks, envelope of a prompt event or None) for every event that
    carries a content list."""
    for event in events:
        data = event["data"]
        if isinstance(data, Mapping) and isinstance(data.get("content"), list):
            envelope = data.get("envelope") if event["type"] in PROMPT_EVENTS else None
            yield event, data["content"], envelope


def js(value: object) -> str:
    """*value* as JSON for a failure message (what crossed the wire), never a Python repr."""
    from dsh_conformance.reporting.escape import show_value

    return show_value(value, 400)


#: A line of the model-visible text that is the delimiter's words alone: a JSON string of
#: the data cannot hold one (a raw line break in it is escaped), so the note's "referenced
#: data may spell those words inside a JSON string" never counts as a delimiter.
_DELIM_LINE: Final = re.compile(r"(?m)^[ \t]*" + re.escape(DELIM_WORDS) + r"[ \t]*$")


def one_delimiter_after_all_prefix_blocks(events: Sequence[Event]) -> None:
    """ENV-053: an enveloped prompt event holds exactly one delimiter, after the text of
    all its prefix contexts; no other event holds one.  Read in the text the model sees,
    whatever the block layout (D-195): the delimiter may be a block of its own or part of
    one."""
    for event, content, envelope in _contents(events):
        if envelope is None:
            continue
        seen = "".join(texts(content))
        found = _DELIM_LINE.findall(seen)
        assert len(found) == 1, (
            f"{len(found)} delimiters ('{DELIM_WORDS}' on a line of its own) in the prompt's "
            f"text where exactly one is due: {js(event)}"
        )
        cut = _DELIM_LINE.search(seen)
        before = seen[: cut.start()] if cut else seen
        prefixes = envelope.get("prefixContexts") or []
        missing = [t for c in prefixes for t in texts(c.get("content") or []) if t not in before]
        assert prefixes, f"an envelope without prefix contexts: {js(event)}"
        assert not missing, (
            f"the delimiter does not follow every prefix context (missing before it: "
            f"{js(missing)}): {js(event)}"
        )


def envelope_shows_the_direct_prompt(events: Sequence[Event]) -> None:
    """ENV-051/054: the envelope's display is what follows the delimiter; a prompt without
    prefix contexts has no envelope and no delimiter; no other event holds a delimiter."""
    for event, content, envelope in _contents(events):
        if envelope is None:
            assert DELIM not in content, f"a delimiter without an envelope: {js(event)}"
            continue
        # what the model reads: the delimiter's words, then the display content, in any
        # block layout (D-195)
        shown = envelope["displayContent"]
        assert prefix_text(content, shown) is not None, (
            f"the display does not follow the delimiter: {js(event)}"
        )


def replay_equals_each_request(result: Mapping[str, Any], agent_id: str) -> None:
    """ENV-058: every captured request is the log's surface before that step, re-derived."""
    rebuilt = replay(result["log"]["events"], agent_id)
    assert result["requests"] == rebuilt, "a captured request differs from its replay"


def no_context_without_its_message(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-021: a record's context is written only after its own prompt event (that
    it follows right after is ENV-056's: D-254)."""
    for record in found:
        prompts = owner_prompts(events, record)
        assert len(prompts) <= 1, f"record {record.text} was written twice"
        for position, value in context_texts(events):
            if value in record.separate:
                first = prompts[0] if prompts else len(events)
                assert position > first, (
                    f"{value} at {position} without its message {record.text} before it"
                )
        if not prompts:
            for event in events:
                if event["type"] in PROMPT_EVENTS:
                    inside = baked(event)
                    assert not any(t and t in inside for t in record.prefix), record.text


def _owned(
    events: Sequence[Event], found: Sequence[Record], kinds: frozenset[str], steered: bool
) -> Iterator[tuple[Record, int]]:
    """Each record (accepted as steering or not) with the position of its prompt event."""
    for record in found:
        prompts = owner_prompts(events, record)
        if prompts and record.steered == steered and events[prompts[0]]["type"] in kinds:
            yield record, prompts[0]


def contexts_travel_with_their_message(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-010: an admitted queued message carries every attached context (wherever placed)."""
    for record, position in _owned(events, found, frozenset({"user/message"}), False):
        missing = carried_by(events, position, record.prefix + record.separate)
        assert not missing, f"{record.text} was written without its contexts {missing}"


def separate_contexts_follow_their_prompt(
    events: Sequence[Event], found: Sequence[Record], kinds: frozenset[str], steered: bool
) -> None:
    """ENV-056 (ENV-060 for steering): separate contexts right after their own prompt event."""
    for record, position in _owned(events, found, kinds, steered):
        assert is_subsequence(record.separate, run_after(events, position)), (
            f"{record.text}: separate contexts {record.separate} do not follow it in order"
        )


def prefix_contexts_bake_into_the_prompt(
    events: Sequence[Event], found: Sequence[Record], kinds: frozenset[str], steered: bool
) -> None:
    """ENV-050/059 (ENV-060 for steering): prefix contexts are baked into the prompt event
    (in any order and block layout, D-195, D-196) and never written as a separate context
    message."""
    for record, position in _owned(events, found, kinds, steered):
        inside = baked(events[position])
        missing = [t for t in record.prefix if t and t not in inside]
        assert not missing, f"{record.text}: prefix contexts {missing} not baked"
        for where, value in context_texts(events):
            assert value not in record.prefix, f"prefix {value} written separately at {where}"


def late_steering_keeps_its_contexts(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-020: steering that becomes queued input keeps its record, contexts included."""
    for record in found:
        if not record.steered:
            continue
        for position in owner_prompts(events, record):
            event = events[position]
            if event["type"] != "user/message":
                continue
            missing = carried_by(events, position, record.prefix + record.separate)
            assert not missing, f"late steering {record.text} lost its contexts {missing}"


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


def _blocked_turns(events: Sequence[Event]) -> Iterator[tuple[list[Event], Event]]:
    for turn in turns(events):
        for event in turn:
            if event["type"] == "prompt/blocked":
                yield turn, event
                break


def blocked_turn_is_rejected(events: Sequence[Event]) -> None:
    """INBOX-013: a block is logged as prompt/blocked and ends the turn rejected, no step."""
    for turn, event in _blocked_turns(events):
        kinds = [e["type"] for e in turn]
        for forbidden in ("user/message", "step/start"):
            assert forbidden not in kinds, f"a blocked turn wrote {forbidden}: {js(kinds)}"
        reason = turn[-1]["data"]["reason"]
        assert reason == {"kind": "rejected", "reason": event["data"]["reason"]}, reason


def block_writes_nothing(events: Sequence[Event], found: Sequence[Record]) -> None:
    """INBOX-011: a blocked prompt's message and contexts are never written."""
    blocked = {t for _, event in _blocked_turns(events) for t in texts(event["data"]["content"])}
    for record in found:
        if record.text not in blocked:
            continue
        pieces = set(record.prefix) | set(record.separate)
        for event in events:
            if event["type"] in PROMPT_EVENTS | {"context/message"}:
                carried = set(texts(event["data"]["content"]))
                assert not pieces & carried, f"blocked {record.text}'s context was written"
                if event["type"] in PROMPT_EVENTS:
                    assert texts(display(event)) != [record.text], f"{record.text} was written"


SIDECHAT: Final = {"kind": "plugin", "plugin": "sidechat"}


def _turn_open_at(events: Sequence[Event], length: int) -> bool:
    for event in reversed(events[:length]):
        if event["type"] in {"turn/start", "turn/end"}:
            opened: bool = event["type"] == "turn/start"
            return opened
    return False


def merge_lands_like_inject(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """SIDE-059: a merge-back lands where inject() would: an idle parent gets a one-shot
    injection turn, an open turn the current log position, a tool batch its end."""
    events = result["log"]["events"]
    for step, outcome in zip(script["steps"], result["steps"], strict=True):
        if step["do"] != "mergeBack" or not outcome["fired"] or "error" in outcome:
            continue
        found = [
            p
            for p, e in enumerate(events)
            if e["type"] == "context/message"
            and e["data"]["source"] == SIDECHAT
            and any(step["text"] in t for t in texts(e["data"]["content"]))
        ]
        assert len(found) == 1, f"merge {step['text']} written {len(found)} times"
        at, length = found[0], outcome["logLength"]
        if not _turn_open_at(events, length):
            start, end = events[length], events[at + 1]
            assert at == length + 1, f"merge {step['text']} not in its own injection turn"
            assert start["type"] == "turn/start", start
            assert start["data"]["trigger"]["kind"] == "injection", start
            assert end["type"] == "turn/end", end
        elif "toolCall" in step.get("on", ""):
            between = {e["type"] for e in events[length:at]}
            assert between <= {"tool/call", "tool/result", "context/message"}, between
            assert events[at - 1]["type"] in {"tool/result", "context/message"}, events[at - 1]
        else:
            assert at == length, f"merge {step['text']} at {at}, not at {length}"


#: What only the model-hidden envelope holds: its own field names as JSON would spell them.
ENVELOPE_FIELDS: Final = ('"displayContent"', '"prefixContexts"')


def envelope_hidden_from_the_model(result: Mapping[str, Any]) -> None:
    """ENV-051 on a host's own loop (issue 36 item 7): the envelope is model-hidden -- no
    captured request holds it, as a field or written out as text -- and its display is
    the direct content: it holds neither the baked snapshot nor the delimiter."""
    events = result["log"]["events"]
    for event, content, envelope in _contents(events):
        if not isinstance(envelope, Mapping):
            continue
        shown = "\n".join(texts(envelope.get("displayContent") or []))
        before: list[str] = []
        for block in texts(content):
            if DELIM_WORDS in block:
                break
            before.append(block)
        direct = "\n".join(texts(content)[len(before) :])
        snapshot = [t for t in before if t.strip() and t not in direct]
        assert not [t for t in snapshot if t in shown], (
            f"the display holds the snapshot: {js(event)}"
        )
        if DELIM_WORDS in shown:
            assert direct.count(DELIM_WORDS) > 1, f"the display holds the delimiter: {js(event)}"
    for number, request in enumerate(result["requests"], start=1):
        for message in request.get("messages", ()):
            if isinstance(message, Mapping):
                assert "envelope" not in message, f"request {number} carries an envelope"
            for value in string_values(message, keys=True):
                leaked = [f for f in ENVELOPE_FIELDS if f in value]
                assert not leaked, f"request {number} holds the envelope as text: {value[:200]}"
