"""Side-session invariants stated independently of the reference model (standard library only).

Each function reads plain JSON -- a session log ``{header, events}`` as ``agent.log``
returns it, captured requests as ``agent.requests`` returns them -- and re-derives what
seed 004 promises with its own small algorithm, so a model bug cannot hide by agreeing
with itself.  Nothing here imports ``dsh_conformance.model``.

Vocabulary (seed-era logs, research note B §1.4, §4.5): a *surface event* carries a
``surfaceOp`` (``"append"``, or ``{op: "replace", start, end}`` over current nodes by seq);
a *balanced* prefix has no open turn or step and answers every tool call in its step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from dsh_conformance.checks import expect, expect_equal
from dsh_conformance.conformance.agent_support import SURFACE_TYPES
from dsh_conformance.conformance.agent_support import surface as surface
from dsh_conformance.conformance.js_objects import js_dumps

JsonLog = Mapping[str, Any]
Events = Sequence[Mapping[str, Any]]
T = TypeVar("T")

SIDECHAT = {"kind": "plugin", "plugin": "sidechat"}


def utf8_len(text: str) -> int:
    """UTF-8 bytes as Node's Buffer.byteLength counts them (a lone surrogate is 3)."""
    return len(text.encode("utf-8", "surrogatepass"))


def length_capped(text: str, cap: int) -> bool:
    """Seed level of "length-capped" (SIDE-025, SIDE-031): within *cap* in some usual unit.

    The note caps the handback's length without naming a unit; UTF-8 bytes are this
    project's choice (D-96, SIDE-055), so the seed check accepts UTF-8 bytes, UTF-16 code
    units or code points.
    """
    units = len(text.encode("utf-16-le", "surrogatepass")) // 2
    return min(utf8_len(text), units, len(text)) <= cap


def canonical_json(value: object) -> str:
    """Comparison form: compact JSON in JavaScript's key order, non-ASCII escaped.

    The key order is the one any JavaScript implementation's output has (array-index
    keys first), so an in-process model and a JS implementation compare equal."""
    return js_dumps(value, separators=(",", ":"), ensure_ascii=True)


# --- balanced completed-turn prefix ------------------------------------------------------


def _turn_ok(turn: Events, number: int | None, steps: bool = True) -> bool:
    """One closed turn ``turn/start … turn/end``: numbering (unless *number* is None),
    step nesting, call pairing.

    *steps* False is the note's reading (D-446): a turn in which the host writes no
    ``step/start``/``step/end`` at all is one implicit step, balanced when every tool call
    it makes is answered before its turn/end; step events are the reference's vocabulary,
    checked only where a host writes them."""
    opened, closed = turn[0]["data"].get("turn"), turn[-1]["data"].get("turn")
    if number is not None and (opened != number or closed != number):
        return False
    if opened != closed:  # a turn/end closes the turn it names
        return False
    stepless = not steps and not any(e["type"] in ("step/start", "step/end") for e in turn)
    if stepless:
        return _calls_answered(turn[1:-1])
    in_step = False
    waiting: set[str] = set()
    for event in turn[1:-1]:
        kind = event["type"]
        data = event["data"]
        if kind in ("turn/start", "turn/end"):
            return False
        if kind == "step/start":
            if in_step:
                return False
            in_step, waiting = True, set()
        elif kind == "step/end":
            if not in_step or waiting:
                return False
            in_step = False
        elif kind == "tool/call":
            if not in_step:
                return False
            waiting.add(str(data.get("callId")))
        elif kind == "assistant/message":
            if not in_step:
                return False
            for block in data.get("content", []):
                if isinstance(block, Mapping) and block.get("type") == "tool-call":
                    waiting.add(str(block.get("id")))
        elif kind == "tool/result" and event.get("surfaceOp") == "append":
            if not in_step:
                return False
            waiting.discard(str(data.get("callId")))
    return not in_step


def _calls_answered(body: Events) -> bool:
    """Every tool call of a stepless turn's body answered by a tool/result after it."""
    waiting: set[str] = set()
    for event in body:
        kind, data = event["type"], event["data"]
        if kind in ("turn/start", "turn/end"):
            return False
        if kind == "tool/call":
            waiting.add(str(data.get("callId")))
        elif kind == "assistant/message":
            for block in data.get("content", []):
                if isinstance(block, Mapping) and block.get("type") == "tool-call":
                    waiting.add(str(block.get("id")))
        elif kind == "tool/result" and event.get("surfaceOp") == "append":
            waiting.discard(str(data.get("callId")))
    return not waiting


def expected_prefix_length(events: Events, numbered: bool = True, steps: bool = True) -> int:
    """The longest prefix ending at a turn/end in which every turn is closed and balanced.

    Segment the log into turns; walk them in order; stop at the first bad or unclosed
    turn.  Events between turns are kept when a later turn/end is kept.  *numbered*:
    turn numbers 1, 2, 3... contiguous, as D-91 reads "balanced" (SIDE-050); the note's
    "balanced completed-turn prefix" (SIDE-004) does not number turns (D-256).  *steps*
    False: a turn without step events is one implicit step (D-446, the note's reading).
    """
    best = 0
    number = 1
    index = 0
    while index < len(events):
        if events[index]["type"] != "turn/start":
            if events[index]["type"] in ("turn/end", "step/start", "step/end", "tool/call"):
                return best  # outside any turn: structure broken
            index += 1
            continue
        end = next(
            (j for j in range(index + 1, len(events)) if events[j]["type"] == "turn/end"), None
        )
        if end is None:
            return best  # the in-flight turn is clipped
        if not _turn_ok(events[index : end + 1], number if numbered else None, steps):
            return best
        best = end + 1
        number += 1
        index = end + 1
    return best


# --- surface fold and replay ------------------------------------------------------------


def message_of(event: Mapping[str, Any]) -> dict[str, Any] | None:
    data = event.get("data") or {}
    if event["type"] in ("user/message", "context/message", "steering/message"):
        return {"role": "user", "content": data.get("content") or []}
    if event["type"] == "assistant/message":
        if not data.get("content"):
            return None
        out = {"role": "assistant", "content": data["content"]}
        if "provenance" in data:
            out["provenance"] = data["provenance"]
        return out
    if event["type"] == "tool/result":
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": data.get("callId"),
                    "content": data.get("content") or [],
                    "isError": data.get("isError", False),
                }
            ],
        }
    return None


def derive(events: Events) -> list[dict[str, Any]]:
    """Replay: the model messages of the surface of *events*."""
    return [m for m in map(message_of, surface(events)) if m is not None]


def step_starts(events: Events, first: int = 0) -> list[int]:
    """Indexes of ``step/start`` events at or after *first*."""
    return [i for i, e in enumerate(events) if i >= first and e["type"] == "step/start"]


def replayed_messages(events: Events, first: int = 0) -> list[list[dict[str, Any]]]:
    """The messages of every request the log's own steps sent (from index *first* on)."""
    prefixes = prefix_messages(events)
    return [prefixes[i] for i in step_starts(events, first)]


# --- side-session predicates ------------------------------------------------------------


def text_of(content: Sequence[Mapping[str, Any]]) -> str:
    return "".join(b.get("text", "") for b in content if b.get("type") == "text")


def is_sidechat_context(event: Mapping[str, Any]) -> bool:
    return bool(event["type"] == "context/message" and event["data"].get("source") == SIDECHAT)


def meta_kind(event: Mapping[str, Any]) -> object:
    meta = event["data"].get("meta")
    return meta.get("kind") if isinstance(meta, Mapping) else None


def is_framing(event: Mapping[str, Any]) -> bool:
    """A sidechat context whose meta marks it as the advisor framing (decision D-94).

    A side session that is itself forked from receives handbacks too (same source), so
    the framing is told apart by ``meta.kind``.
    """
    return is_sidechat_context(event) and meta_kind(event) == "sidechat/framing"


def is_handback(event: Mapping[str, Any]) -> bool:
    return is_sidechat_context(event) and meta_kind(event) == "sidechat/handback"


def sidechat_contexts(events: Events) -> list[Mapping[str, Any]]:
    return [e for e in events if is_sidechat_context(e)]


def appended(child: JsonLog) -> Events:
    """The child's appended history: events after its seedLength."""
    events: Events = child["events"]
    return events[child["header"]["seedLength"] :]


#: Events that put a message in the conversation, in the notes' vocabulary.
MESSAGE_EVENTS = frozenset(
    {"user/message", "context/message", "steering/message", "assistant/message", "tool/result"}
)


def is_message(event: Mapping[str, Any]) -> bool:
    """A message of the conversation (the reference also marks it with a surfaceOp, a
    field the notes do not name: D-258)."""
    return event.get("type") in MESSAGE_EVENTS or "surfaceOp" in event


def framing_problems(child: JsonLog) -> list[str]:
    """AC-02: exactly one plugin-sourced framing context, the first appended surface event."""
    tail = appended(child)
    problems = []
    framings = [e for e in tail if is_framing(e)]
    if len(framings) != 1:
        problems.append(f"{len(framings)} framing contexts in the appended history (want 1)")
    first = next((e for e in tail if is_message(e)), None)
    if first is None or not is_framing(first):
        problems.append(f"first appended surface event is {first and first['type']!r}")
    elif first["data"]["source"].get("kind") != "plugin":
        problems.append("framing is not plugin-sourced")
    return problems


#: What the seed's framing sentence asks the text to say (SIDE-007: "tells the child to
#: explain without mutating or continuing the task"), as phrase families: the text must
#: carry one phrase of each, in any wording.  The exact text is the profile's (SIDE-053).
FRAMING_MEANING: dict[str, tuple[str, ...]] = {
    "explain": ("explain", "answer", "advise", "advisor"),
    "without mutating": (
        "read-only",
        "read only",
        "not modify",
        "never modify",
        "without modifying",
        "not change",
        "never change",
        "without changing",
        "not mutate",
        "never mutate",
        "without mutating",
        "not edit",
        "never edit",
    ),
    "without continuing the task": (
        "not continue",
        "never continue",
        "without continuing",
        "not carry on",
        "never carry on",
        "not resume",
        "never resume",
        "not complete the task",
        "not pick up the task",
    ),
}


def framing_meaning_problems(text: str) -> list[str]:
    """The parts of the seed's framing meaning *text* does not say (case-insensitive)."""
    words = " ".join(text.lower().replace("’", "'").replace("n't", " not").split())
    return [
        f"the framing does not say {part!r} (none of {list(phrases)})"
        for part, phrases in FRAMING_MEANING.items()
        if not any(phrase in words for phrase in phrases)
    ]


def fork_problems(
    parent_before: JsonLog, parent_after: JsonLog, child: JsonLog, parent_id: str
) -> list[str]:
    """AC-01 without the system prompt: untouched source, prefix, header stamps."""
    problems = []
    if canonical_json(parent_before) != canonical_json(parent_after):
        problems.append("the fork changed the source log or header")
    header = child["header"]
    length = expected_prefix_length(parent_before["events"])
    if header.get("parentSession") != parent_id:
        problems.append(f"parentSession {header.get('parentSession')!r} != {parent_id!r}")
    if header.get("seedLength") != length:
        problems.append(f"seedLength {header.get('seedLength')!r} != expected {length}")
    if header.get("cwd") != parent_before["header"].get("cwd"):
        problems.append("cwd differs from the parent's")
    seed = child["events"][: header.get("seedLength", 0)]
    if canonical_json(seed) != canonical_json(parent_before["events"][:length]):
        problems.append("the child's seed is not the parent's prefix")
    return problems


def seed_fork_points(events: Events) -> tuple[int, ...]:
    """Seed lengths the seed's "forked at the source's last completed turn" allows.

    Any end of a turn/end inside the balanced prefix that is not before the last turn that
    ended ``completed``: whether an aborted, failed or injection turn after it counts as
    "completed" is this project's reading (D-90, SIDE-050 pins the last turn/end of any
    reason), not the sentence's.  Step events are not required (D-446).
    """
    allowed: set[int] = set()
    for numbered in (True, False):  # a numbering gap may end "balanced" or not (D-256)
        limit = expected_prefix_length(events, numbered=numbered, steps=False)
        ends = [i + 1 for i in range(limit) if events[i]["type"] == "turn/end"]
        completed = [
            i + 1
            for i in range(limit)
            if events[i]["type"] == "turn/end"
            and (events[i]["data"].get("reason") or {}).get("kind") == "completed"
        ]
        floor = completed[-1] if completed else 0
        allowed.update(n for n in [0, *ends] if n >= floor)
    return tuple(sorted(allowed))


def expect_fork(
    parent_before: JsonLog, parent_after: JsonLog, child: JsonLog, parent_id: str
) -> None:
    """A fork as separate checks: untouched source (SIDE-020), a balanced completed-turn
    prefix the seed allows (SIDE-004), the header stamps (SIDE-005), and this project's
    fork point, the last turn/end of any reason (SIDE-050, D-90)."""
    header = child["header"]
    events = parent_before["events"]
    length = header.get("seedLength")
    shown = {"child header": header, "parent": parent_id}
    expect(
        "SIDE-020",
        canonical_json(parent_before) == canonical_json(parent_after),
        "the fork changed the source log or header",
        **shown,
    )
    with_stamps = (
        header.get("parentSession") == parent_id
        and isinstance(length, int)
        and not isinstance(length, bool)
        and header.get("cwd") == parent_before["header"].get("cwd")
    )
    expect("SIDE-005", with_stamps, "parentSession, seedLength or cwd missing or wrong", **shown)
    if not with_stamps:
        return
    seed = child["events"][:length]
    expect(
        "SIDE-004",
        length in seed_fork_points(events)
        and canonical_json(seed) == canonical_json(events[:length]),
        "the child's seed is not a balanced completed-turn prefix of the parent",
        allowed=seed_fork_points(events),
        **shown,
    )
    expect_equal("SIDE-050", length, expected_prefix_length(events), what="seedLength", **shown)


def _block_meaning(block: object) -> object:
    """What the model reads of one content block; None for what a host may leave out."""
    if not isinstance(block, Mapping):
        return ("?", canonical_json(block))
    kind = block.get("type")
    if kind == "text":
        return None  # text is read run together (see meaning)
    if kind == "reasoning":
        return None  # whether reasoning goes back to the model is the host's
    if kind == "tool-call":
        return ("tool-call", block.get("id"), block.get("name"))
    if kind == "tool-result":
        inner = block.get("content")
        return (
            "tool-result",
            block.get("toolCallId"),
            text_of(inner) if isinstance(inner, list) else canonical_json(inner),
            bool(block.get("isError", False)),
        )
    return (str(kind), canonical_json(block))


def meaning(messages: object) -> list[tuple[object, ...]]:
    """Messages as the model reads them (issue 36, D-257): role, the text run together
    and each non-text block by what it says.  Layout, optional fields (a tool result's
    ``isError: false``, an assistant's ``provenance``), reasoning and empty messages are
    the host's: neither note nor protocol doc fixes those bytes."""
    out: list[tuple[object, ...]] = []
    for message in messages if isinstance(messages, list) else [messages]:
        if not isinstance(message, Mapping):
            out.append(("?", canonical_json(message)))
            continue
        items: list[object] = []
        text = ""
        for block in message.get("content") or []:
            if isinstance(block, Mapping) and block.get("type") == "text":
                text += str(block.get("text", ""))
                continue
            read = _block_meaning(block)
            if read is not None:
                if text:
                    items.append(text)
                    text = ""
                items.append(read)
        if text:
            items.append(text)
        if items:
            out.append((message.get("role"), *items))
    return out


def _prefix_reads(events: Events, read: Callable[[Mapping[str, Any]], list[T]]) -> list[list[T]]:
    """What *read* gives for each node of the surface of ``events[:k]``, run together,
    for every ``k`` from 0 to ``len(events)``, in one pass: the surface is a fold (append
    pushes, replace splices a seq range), so each prefix is its current nodes' reads."""
    nodes: list[tuple[object, list[T]]] = []  # (seq, its reads)
    out: list[list[T]] = [[]]
    for event in events:
        if event["type"] not in SURFACE_TYPES:
            out.append(out[-1])
            continue
        node = (event["seq"], read(event))
        op: Any = event.get("surfaceOp")
        if op == "append":
            nodes.append(node)
        else:
            seqs = [seq for seq, _ in nodes]
            lo, hi = seqs.index(op["start"]), seqs.index(op["end"])
            nodes[lo : hi + 1] = [node]
        out.append([item for _, reads in nodes for item in reads])
    return out


def _messages(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    message = message_of(event)
    return [] if message is None else [message]


def _meanings(event: Mapping[str, Any]) -> list[tuple[object, ...]]:
    message = message_of(event)
    return [] if message is None else meaning(message)


def prefix_messages(events: Events) -> list[list[dict[str, Any]]]:
    """``derive(events[:k])`` for every ``k`` (issue 44: rederiving every prefix was most
    of a lockstep test)."""
    return _prefix_reads(events, _messages)


def prefix_meanings(events: Events) -> list[list[tuple[object, ...]]]:
    """``meaning(derive(events[:k]))`` for every ``k``: a message's meaning is its own."""
    return _prefix_reads(events, _meanings)


def _first_difference(actual: list[Any], expected: list[Any]) -> str:
    for i, (a, e) in enumerate(zip(actual, expected, strict=False)):
        if a != e:
            return f"message {i}: {a!r} where the log has {e!r}"
    return f"{len(actual)} messages where the log has {len(expected)}"


def request_problems(
    requests: Sequence[Mapping[str, Any]],
    log: JsonLog,
    exact: bool = False,
    first: int | None = None,
) -> list[str]:
    """Each captured request names this session and replays its log, each problem with
    the difference shown.

    At the seed's level (*exact* false: SIDE-010, SIDE-026) a request is read for its
    meaning and must be the replay of some log prefix, the requests in log order: a host
    need not write ``step/start`` events nor the reference's message bytes.  *exact* is
    the reference's replay (SIDE-090, D-72): one request per ``step/start``, its messages
    the byte-identical derivation of the log before it.  *first*: the session's own part
    of its log starts there (default: its header's seedLength, else 0).
    """
    problems = []
    events = log["events"]
    if first is None:
        first = log["header"].get("seedLength") or 0
    sid = log["header"].get("id")
    for i, request in enumerate(requests):
        if request.get("sessionId") != sid:
            problems.append(f"request {i} names session {request.get('sessionId')!r}")
    if exact:
        replays = replayed_messages(events, first)
        if len(replays) != len(requests):
            problems.append(f"{len(requests)} requests but {len(replays)} steps in the log")
        for i, (request, messages) in enumerate(zip(requests, replays, strict=False)):
            got, want = request.get("messages"), messages
            if canonical_json(got) != canonical_json(want):
                problems.append(
                    f"request {i} is not the byte replay of its log position: "
                    + _first_difference(
                        [canonical_json(m) for m in got or []], [canonical_json(m) for m in want]
                    )
                )
        return problems
    _, unmatched = replay_positions(requests, events, first)
    problems.extend(unmatched)
    return problems


def replay_positions(
    requests: Sequence[Mapping[str, Any]], events: Events, first: int = 0
) -> tuple[list[int | None], list[str]]:
    """The log position each request replays, read for its meaning (D-257): the earliest
    position from the previous request's on (from *first* for the first) whose derived
    messages mean what the request's do; None, with the difference shown, where none does.
    A request sees a logged event exactly when its position is after it."""
    prefixes = prefix_meanings(events)
    at = min(first, len(events))
    positions: list[int | None] = []
    problems = []
    for i, request in enumerate(requests):
        read = meaning(request.get("messages"))
        found = next((k for k in range(at, len(prefixes)) if prefixes[k] == read), None)
        positions.append(found)
        if found is None:
            nearest = prefixes[-1] if len(read) >= len(prefixes[-1]) else prefixes[at]
            problems.append(
                f"request {i} is not the replay of any log position from event {at} on: "
                + _first_difference(read, nearest)
            )
            continue
        at = found
    return positions, problems
