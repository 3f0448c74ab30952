"""Seed 004's side-session sentences, checked on a ``side.scenario.run`` outcome alone.

Each check reads the script (who was sent what, which replies the model gave) and what the
host observed (both sessions' logs and requests, what it saw around each action) and
restates one sentence of seed 004 with the standard library, the independent fold and
replay of ``agent_support`` and the prefix rules of ``side_invariants``.  Nothing here
reads the reference's wording, plugin meta, heading, header layout or turn numbering: the
framing is recognised as the plugin-sourced context/message at the head of the child's
appended history, a handback by the words the child's model wrote, the fork point by the
host's seedLength where the two logs admit it (D-270..D-274, D-443).  Each check raises
``AssertionError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.conformance.agent_support import (
    SEED_EVENT_TYPES,
    SURFACE_TYPES,
    derive,
    surface,
)
from dsh_conformance.conformance.scenario_oracle import js
from dsh_conformance.conformance.side_invariants import (
    canonical_json,
    length_capped,
    meaning,
    replay_positions,
    request_problems,
    seed_fork_points,
)
from dsh_conformance.conformance.side_scenario_reading import (
    Outcome,
    child_texts,
    dumped,
    event_text,
    failed_merges,
    fired,
    fits,
    fork,
    fork_readings,
    framing,
    handback_for,
    is_plugin_context,
    is_sidechat,
    merges,
    parent_system,
    seed_length,
    system_of,
    texts,
)

# --- the checks, one per sentence ---------------------------------------------------------


def side_session_is_live_and_its_own(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-003: an ordinary live session forked from the parent, attached to its own agent
    (its requests name its own session), framed, and able to merge back one note."""
    fork(script, result)
    child = result["child"]
    cid, pid = child["log"]["header"]["id"], result["parent"]["log"]["header"]["id"]
    assert cid != pid, "the side session has the parent's id"
    assert child["requests"], "the side session never asked its model anything"
    named = {r.get("sessionId") for r in child["requests"]}
    assert named == {cid}, f"the side session's requests name {sorted(map(str, named))}"
    _, found = framing(script, result)
    assert found, "the side session is not framed (no plugin-sourced context before its turns)"
    fitting = [
        i
        for i, o in fired(script, result, "mergeBack")
        if o.get("parent", {}).get("status") != "disposed"
        and fits(handback_for(script, result, i), script["steps"][i].get("cap"))
    ]
    done = {m.index for m in merges(script, result)}
    assert not fitting or done & set(fitting), (
        f"no handback could be merged back: {failed_merges(script, result)}"
    )


def child_seed_is_a_completed_turn_prefix(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-004: the child starts with the parent's balanced prefix ending at a completed
    turn (any end the sentence allows: side_invariants.seed_fork_points), nothing of a turn
    still open at the fork."""
    before = fork(script, result)["source"]["before"]["events"]
    m = seed_length(script, result)
    allowed = seed_fork_points(before)
    assert m in allowed, (
        f"the child took {m} of the parent's {len(before)} events; the sentence allows {allowed}"
    )


def child_header_stamps_lineage(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-005: the child's header stamps parentSession (the parent's id) and seedLength
    (how many events it took), 0 included."""
    header = result["child"]["log"]["header"] if "child" in result else {}
    fork(script, result)
    pid = result["parent"]["log"]["header"]["id"]
    assert header.get("parentSession") == pid, f"parentSession: {header.get('parentSession')!r}"
    length = header.get("seedLength")
    readings = fork_readings(script, result)
    # a seedLength the schema cannot read as an integer is unjudged, not wrong (D-522):
    # comparing it raises UnreadableField before the type is asked
    took = " or ".join(map(str, readings))
    assert length in readings, f"seedLength {length!r}, but the logs say the child took {took}"
    assert type(length) is int, f"seedLength {length!r} is not an integer"


def fork_composes_an_ordinary_agent(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-006: the child is an ordinary agent on the ordinary store -- its log is the seed
    then events of the note's own types, its requests replay that log -- and the fork
    wrote nothing into the source."""
    source = fork(script, result)["source"]
    child = result["child"]
    m = seed_length(script, result)
    ordinary = SEED_EVENT_TYPES | {e["type"] for e in result["parent"]["log"]["events"]}
    new = {e["type"] for e in child["log"]["events"][m:]} - ordinary
    assert not new, f"the side session's log holds event types no agent writes: {sorted(new)}"
    assert len(source["after"]["events"]) == len(source["before"]["events"]), (
        "the fork appended to the source log"
    )
    problems = request_problems(child["requests"], child["log"], first=m)
    assert not problems, (
        "the side session's requests are not the replay of its own log: " + "; ".join(problems)
    )


def framing_is_one_plugin_context(script: Mapping[str, Any], result: Outcome) -> str:
    """SIDE-007: one plugin-sourced context/message injected after creation, before the
    child's first turn of its own.  Returns its text (what it says is a person's review)."""
    fork(script, result)
    _, found = framing(script, result)
    assert len(found) == 1, f"{len(found)} plugin-sourced contexts frame the side session"
    text = event_text(found[0])
    assert text.strip(), "the framing context says nothing"
    first = result["child"]["requests"][0]["messages"] if result["child"]["requests"] else []
    assert any(texts(m.get("content")) == text for m in first), (
        "the child's first request does not carry the framing"
    )
    return text


def system_prompt_is_the_parents(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-008 (and SIDE-017): every request of the child carries the parent's system
    prompt byte for byte."""
    fork(script, result)
    want = parent_system(script, result)
    for n, got in enumerate(system_of(result["child"]), start=1):
        same = (
            isinstance(got, str)
            and isinstance(want, str)
            and (
                got.encode("utf-16-le", "surrogatepass")
                == want.encode("utf-16-le", "surrogatepass")
            )
        )
        assert same or got == want, f"child request {n}'s system prompt differs from the parent's"


def framing_stays_out_of_the_system_prompt(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-017: the framing is a context, never a change of the child's system prompt."""
    system_prompt_is_the_parents(script, result)
    _, found = framing(script, result)
    for event in found:
        text = event_text(event)
        for got in system_of(result["child"]):
            assert not (text and isinstance(got, str) and text in got), "framing in the system"


def handback_is_asked_then_injected(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-009: the child is asked and answers; its handback reaches the parent as one
    plugin-sourced context/message."""
    events = result["child"]["log"]["events"] if "child" in result else []
    for index, outcome in fired(script, result, "askHandback"):
        if "child" not in outcome or outcome["child"]["status"] == "disposed":
            continue
        assert "error" not in outcome, f"step {index}: the handback request failed: {js(outcome)}"
        after = events[outcome["child"]["logLength"] :]
        answered = [e for e in after if e["type"] == "assistant/message" and event_text(e)]
        assert answered, f"step {index}: the child never answered the handback request"
    for merged in merges(script, result):
        assert merged.handback, f"step {merged.index}: the child gave no handback to merge"
        events = result["parent"]["log"]["events"]
        assert len(merged.logged) == 1, (
            f"step {merged.index}: the handback is in {len(merged.logged)} parent contexts"
        )
        assert is_plugin_context(events[merged.logged[0]]), "the merge is not plugin-sourced"
    for index, error in failed_merges(script, result):
        hb = handback_for(script, result, index)
        cap = script["steps"][index].get("cap")
        assert not (hb and fits(hb, cap)), (
            f"step {index}: a handback within its cap refused: {error}"
        )


def next_parent_request_sees_it(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-010: every parent request is the replay of the parent's log before it, so the
    next request after a merge-back sees it where it is logged; the merge adds no new event
    type."""
    parent = result["parent"]
    events = parent["log"]["events"]
    first = len(script["parent"].get("seed", ()))
    # each request read for its meaning at the log position it replays (D-257, D-447)
    problems = request_problems(parent["requests"], parent["log"], first=first)
    positions, _ = replay_positions(parent["requests"], events, first)
    assert not problems, (
        "a parent request differs from the replay of the parent's log: " + "; ".join(problems)
    )
    for merged in merges(script, result):
        for at in merged.logged:
            later = [k for k, p in enumerate(positions) if p is not None and p > at]
            if later:
                note = meaning([{"role": "user", "content": events[at]["data"]["content"]}])
                seen = meaning(parent["requests"][later[0]]["messages"])
                assert all(item in seen for item in note), (
                    f"the request after the merge at {at} does not see it"
                )
    done = merges(script, result)
    start = min((result["steps"][m.index]["parent"]["logLength"] for m in done), default=None)
    if start is not None:
        known = SEED_EVENT_TYPES | {e["type"] for e in events[:start]}
        new = {e["type"] for e in events[start:]} - known
        assert not new, f"merging back brought new event types: {sorted(new)}"


def byte_replay_problems(script: Mapping[str, Any], result: Outcome) -> list[str]:
    """SIDE-090 (profile): each session's requests are the reference's replay of its own
    log -- one per step/start after what it inherited, messages byte for byte."""
    problems = []
    first = len(script["parent"].get("seed", ()))
    sessions = [("parent", result["parent"], first)]
    if "child" in result:
        sessions.append(("child", result["child"], seed_length(script, result)))
    for name, session, start in sessions:
        found = request_problems(session["requests"], session["log"], exact=True, first=start)
        problems += [f"{name}: {p}" for p in found]
    return problems


def merge_is_one_capped_sidechat_context(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-025: each merge-back adds exactly one context/message with source
    {kind: 'plugin', plugin: 'sidechat'}, within its cap in some usual unit, seen by the
    next request at the position replay gives it."""
    events = result["parent"]["log"]["events"]
    done = merges(script, result)
    sidechat = [
        e for e in events if e["type"] == "context/message" and is_sidechat(e["data"].get("source"))
    ]
    assert len(sidechat) == len(done), f"{len(done)} merges but {len(sidechat)} sidechat contexts"
    for merged in done:
        assert len(merged.logged) == 1, f"step {merged.index}: {len(merged.logged)} contexts"
        event = events[merged.logged[0]]
        source = event["data"].get("source")
        assert is_sidechat(source), f"the note's source is {source}, not plugin sidechat"
        if merged.cap is not None:
            assert length_capped(event_text(event), merged.cap), f"over the cap {merged.cap}"
    surfaced = derive(events)
    for merged in done:
        message = {"role": "user", "content": events[merged.logged[0]]["data"]["content"]}
        assert message in surfaced, f"step {merged.index}: replay does not see the merge"
    next_parent_request_sees_it(script, result)


def every_merge_is_capped_and_kept(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-031: each of n merges adds one note of at most its own cap; none rewrites or
    consolidates an earlier one (all stay on the parent's surface, each with its own)."""
    events = result["parent"]["log"]["events"]
    done = merges(script, result)
    on_surface = {e["seq"] for e in surface(events)}
    for merged in done:
        assert len(merged.logged) == 1, f"step {merged.index}: {len(merged.logged)} contexts"
        event = events[merged.logged[0]]
        text = event_text(event)
        if merged.cap is not None:
            assert length_capped(text, merged.cap), f"step {merged.index}: over cap {merged.cap}"
        others = [m for m in done if m is not merged and m.carried_by(text)]
        assert not others, f"step {merged.index}: the note consolidates earlier handbacks"
        assert event["seq"] in on_surface, f"step {merged.index}: the note was rewritten away"
    ordered = [m.logged[0] for m in done if m.logged]
    assert ordered == sorted(ordered), "the notes are not in merge order"


def child_outlives_the_parent(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-015: the child keeps working after the parent's turn ended, was cancelled or the
    parent was disposed of; its work never becomes a parent tool result."""
    fork(script, result)
    child = result["child"]
    ends_child = any(
        s["do"] in {"cancel", "dispose"} and s.get("session") == "child" for s in script["steps"]
    )
    asked = dumped([r["messages"] for r in child["requests"]])
    for index, outcome in fired(script, result, "send", "steer"):
        step = script["steps"][index]
        if step.get("session") != "child" or "child" not in outcome:
            continue
        assert "error" not in outcome, f"step {index}: the child refused a prompt: {js(outcome)}"
        if not ends_child:
            assert dumped(step["text"])[1:-1] in asked, f"step {index}: never reached the model"
    if not ends_child:
        assert child["status"] == "idle", f"the child ended {child['status']}"
    owned = [t for t in child_texts(script) if t]
    for event in result["parent"]["log"]["events"]:
        if event["type"] == "tool/result":
            shown = dumped(event["data"])
            assert not any(t in shown for t in owned), "the child's work became a tool result"


def no_sidechat_events(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-019: neither log holds an event whose type starts with ``sidechat/``."""
    for name in ("parent", "child"):
        if name in result:
            types = {e["type"] for e in result[name]["log"]["events"]}
            assert not [t for t in types if t.startswith("sidechat/")], f"{name}: {types}"


def fork_leaves_the_source_untouched(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-020: the parent's log and header are the same just before and right after the
    fork."""
    source = fork(script, result)["source"]
    assert canonical_json(source["before"]) == canonical_json(source["after"]), (
        "the fork changed the parent's log or header"
    )


def framing_heads_the_appended_history(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-024: exactly one plugin-sourced context/message, the first model-visible event
    the child appended after its seed, next after the inherited history in its first
    request; the system prompt is unchanged."""
    m, found = framing(script, result)
    assert len(found) == 1, f"{len(found)} plugin-sourced contexts in the head of the child"
    events = result["child"]["log"]["events"]
    first = next((e for e in events[m:] if e["type"] in SURFACE_TYPES), None)
    assert first is not None, "the child appended nothing the model sees"
    assert canonical_json(first) == canonical_json(found[0]), (
        f"the first appended model-visible event is a {first['type']!r}, not the framing"
    )
    requests = result["child"]["requests"]
    if requests:
        inherited = derive(events[:m])
        want = [*inherited, {"role": "user", "content": found[0]["data"]["content"]}]
        got = requests[0]["messages"][: len(want)]
        assert canonical_json(got) == canonical_json(want), (
            "the child's first request is not the inherited history, then the framing"
        )
    for got in system_of(result["child"]):
        assert got == parent_system(script, result), "the framing changed the system prompt"


def no_cross_talk(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-026: after the fork, nothing of one session reaches the other's log or requests
    (but the merged notes, which are the parent's by design), and each session's requests
    name it and replay its own log."""
    fork(script, result)
    before = dumped(fork(script, result)["source"]["before"])
    parent, child = result["parent"], result["child"]
    mine = child_texts(script)
    theirs = [
        t
        for t in (
            [
                s["text"]
                for s in script["steps"]
                if s["do"] in {"send", "steer"} and s.get("session", "parent") == "parent"
            ]
            + [r["text"] for r in script["replies"].get("parent", ()) if "text" in r]
        )
        if dumped(t)[1:-1] not in before
    ]
    child_seen = dumped([child["log"]["events"], [r["messages"] for r in child["requests"]]])
    leaked = [t for t in theirs if dumped(t)[1:-1] in child_seen]
    assert not leaked, f"the parent's words after the fork reached the child: {leaked}"
    notes = [e["data"]["content"] for e in parent["log"]["events"] if is_plugin_context(e)]
    kept = [e for e in parent["log"]["events"] if not (is_plugin_context(e))]
    asked = [
        [m for m in r["messages"] if m.get("content") not in notes] for r in parent["requests"]
    ]
    parent_seen = dumped([kept, asked])
    leaked = [t for t in mine if dumped(t)[1:-1] in parent_seen]
    assert not leaked, f"the child's words reached the parent outside a merged note: {leaked}"
    for name, session in (("parent", parent), ("child", child)):
        sid = session["log"]["header"]["id"]
        named = {r.get("sessionId") for r in session["requests"]}
        assert named <= {sid}, f"{name} requests name {sorted(map(str, named))}"
    m = seed_length(script, result)
    problems = request_problems(child["requests"], child["log"], first=m)
    assert not problems, "a child request is not the replay of the child's own log: " + (
        "; ".join(problems)
    )


def compacted_source_forks_its_view(script: Mapping[str, Any], result: Outcome) -> None:
    """SIDE-029: a compacted source forks its compacted view: the child inherits the
    summaries and never the turns they replaced."""
    before = fork(script, result)["source"]["before"]["events"]
    m = seed_length(script, result)
    seed = before[:m]
    kept = {e["seq"] for e in surface(seed)}
    shadowed = [
        event_text(e)
        for e in seed
        if e["type"] in SURFACE_TYPES and e.get("surfaceOp") == "append" and e["seq"] not in kept
    ]
    asked = dumped([r["messages"] for r in result["child"]["requests"]])
    leaked = [t for t in shadowed if t and dumped(t)[1:-1] in asked]
    assert not leaked, f"the child's requests carry replaced turns: {leaked}"
    inherited = derive(seed)
    for n, request in enumerate(result["child"]["requests"], start=1):
        got = request["messages"][: len(inherited)]
        assert canonical_json(got) == canonical_json(inherited), (
            f"child request {n} does not start with the parent's compacted view"
        )
