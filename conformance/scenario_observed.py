"""More of seed 000, checked on what a host observes of a scenario (docs/scenario.md).

Beside conformance/scenario_oracle.py (placement and fate in the log): what each
prompt-submit invocation received (``submissions``), what each ``agent/queued`` observation
reported (``queued``), the injected messages, the listener waterfall's result and the host's
own ``prepare()`` steps.  Nothing here imports the model; texts are unique per owner
(conformance/scenario_programs.py), so ``lctx-7`` in the log is listener 7's context.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

from dsh_conformance.conformance.agent_support import DELIM, SEED_EVENT_TYPES, prefix_text
from dsh_conformance.conformance.scenario_oracle import (
    PROMPT_EVENTS,
    Record,
    baked,
    display,
    js,
    run_after,
    texts,
)

Event = Mapping[str, Any]
USER: Final = {"kind": "user"}
#: Event types of the note's era; placement adds none (ENV-052).


def _owned_text(value: str) -> bool:
    """A context text of the generated scripts: attached (``ctx-``) or a listener's (``lctx-``)."""
    return value.startswith(("ctx-", "lctx-"))


#: An owned context text (``ctx-<step>-<j>``, ``lctx-<n>``: digits only, unique per owner).
_OWNED: Final = re.compile(r"l?ctx-\d+(?:-\d+)?")


def baked_texts(event: Event) -> list[str]:
    """The owned context texts baked into a prompt event, read from the text the model
    sees before the delimiter: whatever the block layout (D-195), even run together."""
    return _OWNED.findall(baked(event))


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def observed(result: Mapping[str, Any], key: str, requirement: str) -> list[Any]:
    """``submissions`` or ``queued`` of the outcome; its absence fails *requirement*."""
    assert key in result, f"the outcome reports no {key}, so {requirement} cannot be shown"
    value: list[Any] = result[key]
    return value


# --- ENV-052: no new event type, no separate context message for a prefix -----------------


def prefix_adds_no_event(events: Sequence[Event]) -> None:
    """ENV-052: placement needs no new event type -- no message event of a type the note
    does not have carries a baked prefix or an envelope's prefix records (a host's own
    log-only records were set aside before, D-444) -- and a baked prefix is never also a
    context message."""
    prefixes: list[str] = []
    records: list[str] = []
    for position, event in enumerate(events):
        if event["type"] in PROMPT_EVENTS and event["data"].get("envelope"):
            again = set(baked_texts(event)) & set(run_after(events, position))
            assert not again, f"prefix {sorted(again)} also written as a context message"
            prefixes += baked_texts(event)
            records += [_json(c) for c in event["data"]["envelope"]["prefixContexts"]]
    for event in events:
        if event["type"] in SEED_EVENT_TYPES:
            continue
        body = _json(event)
        carried = [t for t in prefixes if _json(t)[1:-1] in body]
        carried += [r for r in records if r in body]
        assert not carried, f"a new event type {event['type']} carries the prefix: {js(event)}"


# --- ENV-061 / INBOX-034: what prompt-submit received --------------------------------------


def prompt_submit_sees_only_the_direct_prompt(
    result: Mapping[str, Any], found: Sequence[Record]
) -> None:
    """ENV-061: each prompt-submit invocation gets a record's direct prompt, no prefix baked."""
    sent = {r.text for r in found}
    for submission in observed(result, "submissions", "ENV-061"):
        content = submission["content"]
        assert DELIM not in content, f"prompt-submit saw a baked prompt: {content}"
        shown = texts(content)
        assert len(shown) == 1, f"prompt-submit saw more than the direct prompt: {content}"
        assert shown[0] in sent, f"prompt-submit saw {shown}, not a sent prompt"


def only_the_queued_path_dispatches_prompt_submit(
    result: Mapping[str, Any], found: Sequence[Record]
) -> None:
    """INBOX-034: drained steering and injections never reach prompt-submit; every admitted
    prompt went through it."""
    events = result["log"]["events"]
    submitted = [texts(s["content"]) for s in observed(result, "submissions", "INBOX-034")]
    flat = {t for shown in submitted for t in shown}
    for event in events:
        if event["type"] == "steering/message":
            for value in texts(display(event)):
                assert value not in flat, f"drained steering {value} went through prompt-submit"
    for value in flat:
        assert not value.startswith(("inj-", "merge-")), f"an injection {value} was submitted"
    admitted = sum(1 for e in events if e["type"] in {"user/message", "prompt/blocked"})
    assert len(submitted) >= admitted, f"{admitted} prompts admitted, {len(submitted)} submitted"
    del found


# --- ENV-062: a rewrite reaches model content and display alike ---------------------------


def rewrite_reaches_content_and_display(events: Sequence[Event]) -> None:
    """ENV-062: a rewritten prompt is the same in the model content and in the display."""
    for event in events:
        if event["type"] not in PROMPT_EVENTS or not event["data"].get("envelope"):
            continue
        model, shown = event["data"]["content"], display(event)
        if "rewritten-" in "".join(texts(model) + texts(shown)):
            # the model reads prefix, delimiter, then exactly what is displayed (D-195)
            assert prefix_text(model, shown) is not None, (
                f"the rewrite differs: model {model}, display {shown}"
            )


# --- INBOX-001 / INBOX-004: the frozen record and its observation -------------------------


def _observation(result: Mapping[str, Any], record: Record, requirement: str) -> Mapping[str, Any]:
    seen: list[Mapping[str, Any]] = [
        q for q in observed(result, "queued", requirement) if texts(q["content"]) == [record.text]
    ]
    assert len(seen) == 1, f"{record.text} observed {len(seen)} times by agent/queued"
    return seen[0]


def each_record_is_one_snapshot(
    script: Mapping[str, Any], result: Mapping[str, Any], found: Sequence[Record]
) -> None:
    """INBOX-001: each accepted send/steer is one record: its content and resolved source,
    observed once; nothing else is observed."""
    accepted = {r.text for r in found}
    for seen in observed(result, "queued", "INBOX-001"):
        shown = texts(seen["content"])
        if any(t.startswith("msg-") for t in shown):
            assert shown[-1] in accepted, f"observed a refused record: {js(seen)}"
            assert len(shown) == 1, f"observed more than the record's content: {js(seen)}"
    for record in found:
        seen = _observation(result, record, "INBOX-001")
        step = script["steps"][record.index]
        assert seen["content"] == [{"type": "text", "text": record.text}], seen
        assert seen["source"] == step.get("source", USER), f"source not resolved: {js(seen)}"


def queued_reports_the_frozen_contexts(result: Mapping[str, Any], found: Sequence[Record]) -> None:
    """INBOX-004: agent/queued reports every attached context of the record, as attached."""
    for record in found:
        seen = _observation(result, record, "INBOX-004")
        assert seen["contexts"] == list(record.contexts), (
            f"{record.text}: agent/queued reported {seen['contexts']}"
        )


def refused_whole(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """INBOX-001: a send/steer carrying a value JSON cannot hold is refused as a whole:
    an error, no observation, nothing of it written."""
    dumped = json.dumps(result["log"]["events"], ensure_ascii=False)
    for step, outcome in zip(script["steps"], result["steps"], strict=True):
        if step["do"] not in {"send", "steer"} or "$hostile" not in json.dumps(step):
            continue
        assert outcome["fired"], step
        assert "error" in outcome, f"accepted a value JSON cannot carry: {js(step)}"
        marker = step.get("text") or step.get("contexts", [{}])[0].get("content", [{}])[0]
        if isinstance(marker, str):
            assert marker not in dumped, f"{marker} was written"
    for seen in result.get("queued", ()):
        assert "$hostile" not in json.dumps(seen), seen


# --- INBOX-006: inject takes source and meta --------------------------------------------


def inject_accepts_source_and_meta(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """INBOX-006: inject() accepts a source and model-hidden meta (no error), writes the
    message once with its source, never as an inbox record, and no request carries the meta."""
    events = result["log"]["events"]
    requests = json.dumps(result["requests"], ensure_ascii=False)
    for step, outcome in zip(script["steps"], result["steps"], strict=True):
        if step["do"] != "inject" or not outcome["fired"] or outcome["status"] == "disposed":
            continue
        assert "error" not in outcome, f"inject refused: {js(step)} -> {outcome['error']}"
        written = [
            e for e in events if e["type"] in PROMPT_EVENTS | {"context/message"}
            and texts(e["data"]["content"]) == [step["text"]]
        ]  # fmt: skip
        assert len(written) <= 1, f"{step['text']} written {len(written)} times"
        if result["status"] == "idle":
            assert written, f"{step['text']} was never written"
        for event in written:
            assert event["data"]["source"] == step.get("source", USER), event
        for seen in result.get("queued", ()):
            assert texts(seen["content"]) != [step["text"]], "an inject became an inbox record"
        if "meta" in step:
            meta = json.dumps(step["meta"], ensure_ascii=False)
            assert meta not in requests, f"inject meta {meta} reached the model"


# --- INBOX-012: the waterfall's allow is authoritative ------------------------------------


def _decide(chain: Sequence[Mapping[str, Any]], record: Record) -> list[tuple[Any, ...]]:
    """Every decision the note admits a listener chain returning for *record*: ('block',),
    ('throw',) or ('allow', content texts or None, context texts).

    An ``allow`` without ``additionalContexts`` reads both ways (D-445): no contexts (the
    reference's, D-66) or the record's own, kept; an ``add-contexts`` listener's contexts
    go before or after the downstream ones (the note names no order)."""
    attached = [c["content"][0]["text"] for c in record.contexts]
    if not chain:
        return [("allow", None, attached)]
    spec, rest = chain[0], chain[1:]
    kind = spec["kind"]
    if kind == "pass":
        return _decide(rest, record)
    if kind == "allow":
        content = texts(spec["content"]) if "content" in spec else None
        if "additionalContexts" in spec:
            extra = [c["content"][0]["text"] for c in spec["additionalContexts"]]
            return [("allow", content, extra)]
        return [("allow", content, []), ("allow", content, attached)]
    if kind in {"block", "throw"}:
        return [(kind,)]
    out: list[tuple[Any, ...]] = []
    for downstream in _decide(rest, record):
        if downstream[0] != "allow":
            out.append(downstream)
            continue
        _, content, contexts = downstream
        if kind == "rewrite":
            out.append(("allow", texts(spec["content"]), contexts))
        elif kind == "drop-contexts":
            out.append(("allow", content, []))
        else:  # add-contexts: either position is allowed
            own = [c["content"][0]["text"] for c in spec["contexts"]]
            out.append(("allow", content, own + contexts))
            out.append(("allow", content, contexts + own))
    return out


def _chain(script: Mapping[str, Any], k: int) -> list[Mapping[str, Any]]:
    return [
        spec
        for spec in script.get("listeners", ())
        if spec.get("event", "prompt-submit") == "prompt-submit" and spec.get("submission", k) == k
    ]


def _carried(events: Sequence[Event], position: int) -> set[str]:
    pieces = baked_texts(events[position]) + run_after(events, position)
    return {t for t in pieces if _owned_text(t)}


def waterfall_allow_is_authoritative(
    script: Mapping[str, Any], result: Mapping[str, Any], found: Sequence[Record]
) -> None:
    """INBOX-012: each admitted prompt is what the chain's returned allow says: its content
    (the record's when the allow has none) and exactly its contexts, in whichever order --
    an allow without additionalContexts read as none or as the record's own (D-445)."""
    events = result["log"]["events"]
    submissions = observed(result, "submissions", "INBOX-012")
    prompts = [p for p, e in enumerate(events) if e["type"] in {"user/message", "prompt/blocked"}]
    if len(prompts) != len(submissions):
        return  # a submission ended otherwise (a cancel while it ran): nothing to pair
    by_text = {r.text: r for r in found}
    for k, (submission, position) in enumerate(zip(submissions, prompts, strict=True), start=1):
        shown = texts(submission["content"])
        record = by_text.get(shown[0]) if len(shown) == 1 else None
        if record is None:
            continue
        decisions = _decide(_chain(script, k), record)
        event = events[position]
        if decisions[0][0] == "throw":
            return  # the turn failed before admission: later pairs are not this one's
        if decisions[0][0] == "block":
            assert event["type"] == "prompt/blocked", f"submission {k}: not blocked: {js(event)}"
            continue
        assert event["type"] == "user/message", f"submission {k}: blocked against the allow"
        shown, got = texts(display(event)), _carried(events, position)
        readings = [([record.text] if c is None else c, set(x)) for _, c, x in decisions]
        assert (shown, got) in readings, (
            f"submission {k}: {js(shown)} with contexts {js(sorted(got))}, where the chain's "
            "allow is " + " or ".join(f"{js(w)} with {js(sorted(x))}" for w, x in readings)
        )


def _strings(value: object) -> Iterator[str]:
    """Every string value under *value* (keys left out)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def blocked_submissions_write_nothing(
    script: Mapping[str, Any], result: Mapping[str, Any], found: Sequence[Record]
) -> None:
    """INBOX-011 read directly (issue 45 item 4): every submission the listener chain blocks
    -- known from the script and the outcome's ``submissions``, not from the host's own
    account of a block -- leaves no prompt event holding its text and no prompt or context
    event holding one of its contexts.  Independent of INBOX-012's pairing and of the
    host's event for a block (a host may log the block in its own words)."""
    events = result["log"]["events"]
    submissions = result.get("submissions")
    if not isinstance(submissions, list):  # which prompt was blocked cannot be read (D-522)
        from dsh_conformance.unjudged import UnreadableField

        raise UnreadableField("scenario.run", "/submissions", "what each prompt-submit saw", "none")
    counts: dict[str, int] = {}
    for record in found:
        counts[record.text] = counts.get(record.text, 0) + 1
    by_text = {r.text: r for r in found if counts[r.text] == 1}
    for k, submission in enumerate(submissions, start=1):
        shown = texts(submission["content"])
        blocked = by_text.get(shown[0]) if len(shown) == 1 else None
        if blocked is None or _decide(_chain(script, k), blocked)[0][0] != "block":
            continue
        record = blocked
        own = {c["content"][0]["text"] for c in record.contexts}
        for position, event in enumerate(events):
            kind = event.get("type")
            if kind not in PROMPT_EVENTS | {"context/message"}:
                continue
            written = set(_strings(event.get("data")))
            assert not (kind in PROMPT_EVENTS and record.text in written), (
                f"submission {k} was blocked, but event {position} ({kind}) writes its "
                f"prompt {record.text}"
            )
            leaked = sorted(own & written)
            assert not leaked, (
                f"submission {k} was blocked, but event {position} ({kind}) writes its "
                f"contexts {', '.join(leaked)}"
            )


# --- INBOX-030 / INBOX-032 / INBOX-035 / ENV-065: the host's prepare() ---------------------


def mentions_are_carried_verbatim(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """INBOX-030: the agent neither parses a session URI in sent content nor reads that
    session: the prompt is written and sent as given, with no context of its own."""
    events = result["log"]["events"]
    sent = [s for s in script["steps"] if s["do"] == "send" and "contexts" not in s]
    users = [e for e in events if e["type"] == "user/message"]
    want = [[{"type": "text", "text": s["text"]}] for s in sent]
    assert [e["data"]["content"] for e in users] == want, "the prompt was not carried verbatim"
    for event in users:
        assert "envelope" not in event["data"], f"the agent built an envelope: {js(event)}"
    assert not [e for e in events if e["type"] == "context/message"], "the agent added context"
    for request, event in zip(result["requests"], users, strict=False):
        last = request["messages"][-1]
        assert last.get("role") == "user", f"the request does not end with the prompt: {last}"
        assert last["content"] == event["data"]["content"], f"the model got {last['content']}"


def _prepared(script: Mapping[str, Any], result: Mapping[str, Any]) -> Iterator[tuple[int, Any]]:
    for index, (step, outcome) in enumerate(zip(script["steps"], result["steps"], strict=True)):
        if step["do"] == "prepare":
            assert outcome["fired"], f"prepare step {index} never ran"
            assert "error" not in outcome, f"prepare step {index} failed: {outcome['error']}"
            yield index, outcome["prepared"]


def prepared_contexts_reach_the_agent(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """INBOX-032: what the host's prepare() returned goes through send/steer's contexts
    untouched: the agent/queued observation carries it, and the prompt event bakes it with
    its meta kept in the envelope."""
    events = result["log"]["events"]
    prepared = dict(_prepared(script, result))
    for step, outcome in zip(script["steps"], result["steps"], strict=True):
        if "prepared" not in step or not outcome["fired"]:
            continue
        assert "error" not in outcome, f"the prepared {step['do']} failed: {outcome['error']}"
        given = prepared[step["prepared"]]
        shown = texts(given["content"])
        if "queued" in result:
            seen = [q for q in result["queued"] if texts(q["content"]) == shown]
            assert [q["contexts"] for q in seen] == [given["contexts"]], seen
        carriers = [e for e in events if e["type"] in PROMPT_EVENTS and texts(display(e)) == shown]
        assert len(carriers) == 1, f"the prepared prompt was written {len(carriers)} times"
        data = carriers[0]["data"]
        snapshot = texts(given["contexts"][0]["content"])
        assert snapshot[0] in baked(carriers[0]), "the prepared snapshot is not baked"
        metas = [c.get("meta") for c in data["envelope"]["prefixContexts"]]
        assert metas == [c.get("meta") for c in given["contexts"]], metas


def preparation_creates_no_turn(script: Mapping[str, Any], result: Mapping[str, Any]) -> None:
    """INBOX-035: a prepare step writes nothing and starts nothing: the log does not grow
    from it until the next host action, and no model request follows from it alone."""
    events = result["log"]["events"]
    steps = list(zip(script["steps"], result["steps"], strict=True))
    for index, _ in _prepared(script, result):
        later = [o["logLength"] for s, o in steps[index + 1 :] if o["fired"]]
        until = later[0] if later else len(events)
        at = steps[index][1]["logLength"]
        assert until == at, f"prepare step {index}: the log grew from {at} to {until}"
    if not any(s["do"] in {"send", "steer", "inject"} for s in script["steps"]):
        assert events == [], "preparation alone wrote to the log"
        assert result["requests"] == [], "preparation alone called the model"
        assert result.get("queued", []) == [], "preparation alone enqueued a message"
