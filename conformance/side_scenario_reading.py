"""Reading a ``side.scenario.run`` outcome for meaning (conformance/side_scenario_checks.py).

What the seed checks need to find in a host's own report, found without the reference's
wording, meta, heading, header layout or turn numbering: the fork and the prefix the child
took (D-271), the framing candidates (D-272), each merge-back with the child's handback and
where it landed (D-273), and whose words a program gave to whom (D-274).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from attrs import frozen

from dsh_conformance.conformance.side_invariants import canonical_json, seed_fork_points

Event = Mapping[str, Any]
Outcome = Mapping[str, Any]
#: Characters of a handback's head or tail a merged note must carry (D-273).
MARK: Final = 8


def texts(content: object) -> str:
    """The text blocks of a content list, run together."""
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", ""))
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text"
    )


def event_text(event: Event) -> str:
    data = event.get("data")
    return texts(data.get("content")) if isinstance(data, Mapping) else ""


def is_plugin_context(event: Event) -> bool:
    data = event.get("data")
    if event.get("type") != "context/message" or not isinstance(data, Mapping):
        return False
    source = data.get("source")
    return isinstance(source, Mapping) and source.get("kind") == "plugin"


def is_sidechat(source: object) -> bool:
    """``source plugin: sidechat``: a plugin source naming sidechat (other fields free)."""
    return (
        isinstance(source, Mapping)
        and source.get("kind") == "plugin"
        and source.get("plugin") == "sidechat"
    )


def dumped(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


# --- reading the outcome ------------------------------------------------------------------


def fired(script: Mapping[str, Any], result: Outcome, *actions: str) -> Iterator[tuple[int, Any]]:
    """(index, outcome) of every fired step doing one of *actions*, in script order."""
    for index, (step, outcome) in enumerate(zip(script["steps"], result["steps"], strict=True)):
        if step["do"] in actions and outcome.get("fired"):
            yield index, outcome


def fork(script: Mapping[str, Any], result: Outcome) -> Mapping[str, Any]:
    """The outcome of the fork that made the side session (it carries ``source``)."""
    for _, outcome in fired(script, result, "fork"):
        if "error" not in outcome and "source" in outcome and "child" in result:
            found: Mapping[str, Any] = outcome
            return found
    errors = [o.get("error") for _, o in fired(script, result, "fork")]
    raise AssertionError(f"no fork step created the side session (errors: {errors})")


def common_prefix(script: Mapping[str, Any], result: Outcome) -> int:
    """How many events the child's log and the parent's log at the fork share at the
    start, event by event: the most the child can have taken."""
    before = fork(script, result)["source"]["before"]["events"]
    child = result["child"]["log"]["events"]
    n = 0
    while n < min(len(before), len(child)) and canonical_json(before[n]) == canonical_json(
        child[n]
    ):
        n += 1
    return n


#: What the child may write of its own that equals the parent's open turn at the same
#: position: the opening of a turn, before anything the model sees (D-443).
_OPENING: Final = frozenset({"turn/start", "step/start", "request/header"})


def fork_readings(script: Mapping[str, Any], result: Outcome) -> tuple[int, ...]:
    """Every seed length the two logs admit (D-443): the common prefix itself, or the
    start of a turn within it after which the child shares only the opening of a turn
    (its own first turn/start may equal the parent's open one, event for event)."""
    child = result["child"]["log"]["events"]
    n = common_prefix(script, result)
    out = [n]
    for start in range(n - 1, -1, -1):
        if child[start]["type"] not in _OPENING:
            break
        if child[start]["type"] == "turn/start":
            out.append(start)
    return tuple(sorted(out))


def stamped_length(result: Outcome) -> object:
    """The child header's seedLength as the host stamped it (any value)."""
    header = result["child"]["log"]["header"]
    return header.get("seedLength") if isinstance(header, Mapping) else None


def seed_length(script: Mapping[str, Any], result: Outcome) -> int:
    """How many events the child took from the parent (D-443): the host's seedLength
    stamp, where the logs admit it (``fork_readings``); otherwise the reading that fits
    the sentence best -- the largest one ending at a fork point it allows -- else the
    common prefix (the child took at least that much)."""
    readings = fork_readings(script, result)
    stamp = stamped_length(result)
    if type(stamp) is int and stamp in readings:
        return stamp
    before = fork(script, result)["source"]["before"]["events"]
    allowed = [m for m in readings if m in seed_fork_points(before)]
    return max(allowed) if allowed else readings[-1]


def system_of(session: Mapping[str, Any]) -> list[object]:
    return [r.get("system") for r in session["requests"]]


def parent_system(script: Mapping[str, Any], result: Outcome) -> object:
    """The system prompt the parent's requests carry (they all carry the same one)."""
    systems = system_of(result["parent"])
    assert systems, "setup: the parent made no request to compare with"
    assert all(s == systems[0] for s in systems), "setup: the parent's own system prompt moved"
    return systems[0]


def framing(script: Mapping[str, Any], result: Outcome) -> tuple[int, list[Event]]:
    """(seed length, the plugin-sourced contexts of the child's appended history before the
    first handback request): the framing candidates (D-272)."""
    m = seed_length(script, result)
    end = len(result["child"]["log"]["events"])
    for _, outcome in fired(script, result, "askHandback"):
        if "child" in outcome:
            end = min(end, outcome["child"]["logLength"])
    head = result["child"]["log"]["events"][m:end]
    return m, [e for e in head if is_plugin_context(e)]


@frozen
class Merged:
    """One merge-back the host accepted: its step, cap, the handback and where it went."""

    index: int
    cap: int | None
    handback: str
    logged: tuple[int, ...]  # positions in the parent log of contexts carrying it

    def carried_by(self, text: str) -> bool:
        return carries(text, self.handback)


def carries(text: str, handback: str) -> bool:
    """*text* holds the handback's head or its tail (a capped note may cut either, D-273)."""
    return bool(handback) and (handback[:MARK] in text or handback[-MARK:] in text)


def handback_for(script: Mapping[str, Any], result: Outcome, merge_index: int) -> str:
    """What the child's model answered to the last handback request before the merge:
    its last non-empty assistant text between the request and the merge."""
    asks = [i for i, o in fired(script, result, "askHandback") if i < merge_index and "child" in o]
    merge = result["steps"][merge_index]
    if not asks or "child" not in merge:
        return ""
    start = result["steps"][asks[-1]]["child"]["logLength"]
    events = result["child"]["log"]["events"][start : merge["child"]["logLength"]]
    answers = [event_text(e) for e in events if e["type"] == "assistant/message"]
    return next((a for a in reversed(answers) if a), "")


def merges(script: Mapping[str, Any], result: Outcome) -> list[Merged]:
    """Every merge-back step that fired into a live parent without an error."""
    out = []
    events = result["parent"]["log"]["events"]
    for index, outcome in fired(script, result, "mergeBack"):
        if "error" in outcome or outcome.get("parent", {}).get("status") == "disposed":
            continue
        hb = handback_for(script, result, index)
        start = outcome["parent"]["logLength"]
        logged = tuple(
            p
            for p, e in enumerate(events)
            if p >= start and e["type"] == "context/message" and carries(event_text(e), hb)
        )
        out.append(Merged(index, script["steps"][index].get("cap"), hb, logged))
    return out


def failed_merges(script: Mapping[str, Any], result: Outcome) -> list[tuple[int, Any]]:
    """Merge-backs into a live parent that the host refused, with their errors."""
    return [
        (i, o["error"])
        for i, o in fired(script, result, "mergeBack")
        if "error" in o and o.get("parent", {}).get("status") != "disposed"
    ]


def fits(handback: str, cap: int | None) -> bool:
    """A handback that fits its cap with room for any heading: every host merges it whole."""
    return cap is not None and len(handback.encode("utf-8", "surrogatepass")) * 2 <= cap


def child_texts(script: Mapping[str, Any]) -> list[str]:
    sent = [
        s["text"]
        for s in script["steps"]
        if s["do"] in {"send", "steer"} and s.get("session") == "child"
    ]
    return sent + [r["text"] for r in script.get("replies", {}).get("child", ()) if "text" in r]
