"""SIDE-*: interactive side sessions -- fork and attach, advisor framing, merge-back.

Example tests, one or more per requirement.  Every check is stated with the independent
helpers of side_invariants.py (standard library only) and blames exactly the requirement it
proves.  The seed's sentences are checked at their own level (the framing's meaning by
phrases, "length-capped" in any usual unit); this project's wording and units are profile
requirements (SIDE-053 framing bytes and meta, SIDE-055 UTF-8 cap, SIDE-056 heading and
notice).  ``test_matches_reference_model`` and ``test_truncation_matches_reference_model``
compare with the oracle and blame REF-008 only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, every, expect, expect_equal, review
from dsh_conformance.conformance import side_invariants as inv
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.profiles import examples

pytestmark = [pytest.mark.capability("side"), pytest.mark.capability("agent")]

HEADING = "## Side-session handback\n\n"
CWD = "/workspace/project"
TOOLS_OPTIONS: dict[str, Any] = {
    "persona": "You are the project assistant for {{cwd}} on {{model}}.",
    "sections": [{"order": 50, "text": "Prefer small diffs."}],
    "tools": [
        {"name": "write_file", "description": "Write a file"},
        {
            "name": "read_file",
            "description": "Read a file",
            "result": [{"type": "text", "text": "contents"}],
        },
    ],
}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


@pytest.fixture
def fresh(impl: Implementation) -> Implementation:
    impl.call("reset")
    return impl


def make_parent(
    impl: Implementation,
    pid: str = "parent",
    *,
    turns: int = 2,
    options: dict[str, Any] | None = None,
) -> None:
    args: dict[str, Any] = {"id": pid, "header": {"cwd": CWD}}
    if options is not None:
        args["options"] = options
    impl.call("agent.create", **args)
    for n in range(1, turns + 1):
        impl.call("agent.script", agent=pid, responses=[{"text": f"parent answer {n}"}])
        impl.call("agent.send", agent=pid, content=text(f"parent question {n}"))
        impl.call("agent.run", agent=pid)


def log(impl: Implementation, aid: str) -> dict[str, Any]:
    result: dict[str, Any] = impl.call("agent.log", agent=aid)
    return result


def turn(impl: Implementation, aid: str, prompt: str, answer: str) -> None:
    impl.call("agent.script", agent=aid, responses=[{"text": answer}])
    impl.call("agent.send", agent=aid, content=text(prompt))
    impl.call("agent.run", agent=aid)


def handback(impl: Implementation, child: str, answer: str, cap: int | None = None) -> None:
    args: dict[str, Any] = {"child": child}
    if cap is not None:
        args["cap"] = cap
    impl.call("side.askHandback", **args)
    impl.call("agent.script", agent=child, responses=[{"text": answer}])
    impl.call("agent.run", agent=child)


def unchanged(impl: Implementation, *aids: str) -> Callable[[], None]:
    """Snapshot the logs of *aids*; the returned check asserts they did not change."""
    before = {a: inv.canonical_json(log(impl, a)) for a in aids}

    def check() -> None:
        for a in aids:
            assert inv.canonical_json(log(impl, a)) == before[a], f"log of {a!r} changed"

    return check


# --- fork and attach ----------------------------------------------------------------------


@pytest.mark.req("SIDE-003", "SIDE-004", "SIDE-005", "SIDE-006", "SIDE-020", "SIDE-050", "SIDE-067")
def test_fork_leaves_source_untouched_and_seeds_the_prefix(fresh: Implementation) -> None:
    make_parent(fresh)
    before = log(fresh, "parent")
    result = fresh.call("side.fork", parent="parent", child="side")
    child = log(fresh, "side")
    inv.expect_fork(before, log(fresh, "parent"), child, "parent")
    with check("SIDE-005", result=result, header=child["header"]):
        assert result["child"] == "side"
        assert result["parentSession"] == "parent"
        assert result["seedLength"] == child["header"]["seedLength"] == len(before["events"])
    expect_equal("SIDE-067", result["compacted"], False, what="compacted")
    # an ordinary live agent of its own
    with check("SIDE-006"):
        assert fresh.call("agent.state", agent="side")["status"] == "idle"
        seeded = len(log(fresh, "side")["events"])
        turn(fresh, "side", "what did we decide?", "you decided X")
        # it converses like any agent: the exchange is in its own log, in whatever events
        # the host writes (which event ends a turn is the host's vocabulary)
        added = inv.canonical_json(log(fresh, "side")["events"][seeded:])
        assert "what did we decide?" in added
        assert "you decided X" in added
    # attached to its own agent: the side session asks its model under its own session
    # (a host sending them under the parent's session fails; any request layout passes)
    requests = fresh.call("agent.requests", agent="side")
    with check("SIDE-003", sessions=[r.get("sessionId") for r in requests]):
        assert requests, "the side session never asked its model anything"
        assert {r.get("sessionId") for r in requests} == {"side"}, "requests of another session"


def _parent_with_tools(impl: Implementation) -> None:
    make_parent(impl, options=TOOLS_OPTIONS, turns=1)
    impl.call(
        "agent.script",
        agent="parent",
        responses=[
            {"toolCalls": [{"name": "read_file"}, {"name": "write_file"}]},
            {"text": "done with tools"},
        ],
    )
    impl.call("agent.send", agent="parent", content=text("use the tools"))


@pytest.mark.req("SIDE-050", "SIDE-004", "SIDE-005", "SIDE-020")
@pytest.mark.parametrize("micro_steps", range(12))
def test_mid_turn_fork_clips_to_the_last_balanced_turn_end(
    fresh: Implementation, micro_steps: int
) -> None:
    _parent_with_tools(fresh)
    for _ in range(micro_steps):
        fresh.call("agent.step", agent="parent")
    before = log(fresh, "parent")
    fresh.call("side.fork", parent="parent", child="side")
    child = log(fresh, "side")
    inv.expect_fork(before, log(fresh, "parent"), child, "parent")
    seed_length = child["header"]["seedLength"]
    expect(
        "SIDE-050",
        seed_length == 0 or before["events"][seed_length - 1]["type"] == "turn/end",
        "the seed does not end at a turn/end",
        seed_length=seed_length,
    )
    # the parent finishes its turn unaffected; the child's seed does not move
    fresh.call("agent.run", agent="parent")
    expect(
        "SIDE-004",
        log(fresh, "side")["events"][:seed_length] == child["events"][:seed_length],
        "the child's seed changed when the parent went on",
    )


@pytest.mark.req("SIDE-050", "SIDE-004", "SIDE-005", "SIDE-020")
def test_every_turn_end_reason_is_a_fork_point(fresh: Implementation) -> None:
    make_parent(fresh, turns=1)
    # error
    fresh.call("agent.script", agent="parent", responses=[{"error": "provider down"}])
    fresh.call("agent.send", agent="parent", content=text("fails"))
    fresh.call("agent.run", agent="parent")
    # rejected
    fresh.call(
        "agent.listen",
        agent="parent",
        listener={"event": "prompt-submit", "kind": "block", "reason": "no", "once": True},
    )
    fresh.call("agent.send", agent="parent", content=text("blocked"))
    fresh.call("agent.run", agent="parent")
    # aborted
    fresh.call("agent.send", agent="parent", content=text("cancelled"))
    fresh.call("agent.step", agent="parent")
    fresh.call("agent.cancel", agent="parent")
    fresh.call("agent.run", agent="parent")
    # injection turn
    fresh.call("agent.inject", agent="parent", content=text("a note"))
    before = log(fresh, "parent")
    reasons = [e["data"]["reason"]["kind"] for e in before["events"] if e["type"] == "turn/end"]
    with check("SIDE-050"):
        assert {"completed", "error", "rejected", "aborted"} <= set(reasons)
    fresh.call("side.fork", parent="parent", child="side")
    child = log(fresh, "side")
    expect_equal(
        "SIDE-050", child["header"]["seedLength"], len(before["events"]), what="seedLength"
    )
    inv.expect_fork(before, log(fresh, "parent"), child, "parent")


@pytest.mark.req("SIDE-052", "SIDE-004", "SIDE-005", "SIDE-020", "SIDE-024", "SIDE-050")
@pytest.mark.parametrize("in_flight", [False, True])
def test_empty_prefix_forks_with_seed_length_zero(fresh: Implementation, in_flight: bool) -> None:
    fresh.call("agent.create", id="parent", header={"cwd": CWD})
    if in_flight:
        fresh.call("agent.send", agent="parent", content=text("first"))
        fresh.call("agent.step", agent="parent")
        fresh.call("agent.step", agent="parent")
    before = log(fresh, "parent")
    result = fresh.call("side.fork", parent="parent", child="side")
    child = log(fresh, "side")
    # a header without seedLength is readable (the schema's stamps are optional) and wrong
    with check("SIDE-052", result=result, header=child["header"]):
        assert result["seedLength"] == 0
        assert child["header"].get("seedLength") == 0
    expect_equal("SIDE-005", child["header"]["parentSession"], "parent", what="parentSession")
    inv.expect_fork(before, log(fresh, "parent"), child, "parent")
    expect_equal("SIDE-024", inv.framing_problems(child), [], what="framing problems")


def _seed_turn(
    events: list[dict[str, Any]], number: int, *, pair: bool = True, close_step: bool = True
) -> None:
    """Append one hand-written turn (user prompt, a tool call, its result if *pair*)."""

    def add(kind: str, data: dict[str, Any], **extra: Any) -> int:
        events.append({"type": kind, "seq": len(events), "time": 0, "data": data, **extra})
        return len(events) - 1

    add("turn/start", {"turn": number, "trigger": {"kind": "message", "source": {"kind": "user"}}})
    add(
        "user/message",
        {"content": text(f"q{number}"), "source": {"kind": "user"}},
        surfaceOp="append",
    )
    add("step/start", {"turn": number, "step": 1})
    call = {"type": "tool-call", "id": f"c{number}", "name": "read_file", "arguments": "{}"}
    add(
        "assistant/message",
        {
            "turn": number,
            "step": 1,
            "content": [call],
            "provenance": {"provider": "mock", "model": "scripted"},
        },
        surfaceOp="append",
        sourceEventSeqs=[],
    )
    if pair:
        call_seq = add(
            "tool/call",
            {
                "turn": number,
                "step": 1,
                "callId": f"c{number}",
                "name": "read_file",
                "arguments": "{}",
            },
        )
        add(
            "tool/result",
            {
                "turn": number,
                "step": 1,
                "callId": f"c{number}",
                "content": text("ok"),
                "isError": False,
            },
            surfaceOp="append",
            sourceEventSeqs=[call_seq],
        )
    if close_step:
        add("step/end", {"turn": number, "step": 1})
    add("turn/end", {"turn": number, "reason": {"kind": "completed"}})


@pytest.mark.req("SIDE-050", "SIDE-004", "SIDE-005", "SIDE-020")
@pytest.mark.parametrize(
    ("faults", "keep_turns"),
    [
        ({}, 3),
        ({2: {"pair": False}}, 1),
        ({3: {"pair": False}}, 2),
        ({1: {"close_step": False}}, 0),
        ({2: {"number": 5}}, 1),
    ],
)
def test_a_structural_fault_ends_the_balanced_prefix(
    fresh: Implementation, faults: dict[int, dict[str, Any]], keep_turns: int
) -> None:
    events: list[dict[str, Any]] = []
    ends = []
    for n in (1, 2, 3):
        fault = dict(faults.get(n, {}))
        number = fault.pop("number", n)
        _seed_turn(events, number, **fault)
        ends.append(len(events))
    fresh.call("agent.create", id="parent", header={"cwd": CWD}, seed=events)
    assert inv.expected_prefix_length(events) == ([0, *ends][keep_turns]), "setup: the oracle"
    before = log(fresh, "parent")
    fresh.call("side.fork", parent="parent", child="side")
    with check("SIDE-050", faults=faults):
        inv.expect_fork(before, log(fresh, "parent"), log(fresh, "side"), "parent")


@pytest.mark.req("SIDE-008", "SIDE-064")
def test_child_system_prompt_and_tools_are_byte_identical(fresh: Implementation) -> None:
    make_parent(fresh, options=TOOLS_OPTIONS)
    parent_request = fresh.call("agent.requests", agent="parent")[-1]
    fresh.call("side.fork", parent="parent", child="side")
    turn(fresh, "side", "explain turn 1", "turn 1 did X")
    turn(fresh, "side", "and turn 2?", "turn 2 did Y")
    system = fresh.call("agent.system", agent="parent")["system"]
    for request in fresh.call("agent.requests", agent="side"):
        with check("SIDE-008", system=request["system"], parent=system):
            assert request["system"].encode("utf-16-le", "surrogatepass") == system.encode(
                "utf-16-le", "surrogatepass"
            )
            assert request["system"] == parent_request["system"]
        with check("SIDE-064"):
            assert fresh.call("agent.system", agent="side")["system"] == system
            assert inv.canonical_json(request["tools"]) == inv.canonical_json(
                parent_request["tools"]
            )
            assert (request["provider"], request["model"]) == (
                parent_request["provider"],
                parent_request["model"],
            )


@pytest.mark.req("SIDE-051")
def test_multi_turn_child_continues_numbering_and_derives_its_own_requests(
    fresh: Implementation,
) -> None:
    make_parent(fresh)
    fresh.call("side.fork", parent="parent", child="side")
    turn(fresh, "parent", "parent moves on", "parent continues")
    for n in range(3):
        turn(fresh, "side", f"side question {n}", f"side answer {n}")
    child = log(fresh, "side")
    seed_length = child["header"]["seedLength"]
    seed_turns = [
        e["data"]["turn"] for e in child["events"][:seed_length] if e["type"] == "turn/start"
    ]
    new_turns = [
        e["data"]["turn"] for e in child["events"][seed_length:] if e["type"] == "turn/start"
    ]
    assert new_turns == list(range(max(seed_turns) + 1, max(seed_turns) + 1 + len(new_turns)))
    assert inv.request_problems(fresh.call("agent.requests", agent="side"), child, exact=True) == []
    dumped = inv.canonical_json(fresh.call("agent.requests", agent="side"))
    assert "parent moves on" not in dumped
    assert "parent question 2" in dumped  # inherited context


# --- advisor framing ----------------------------------------------------------------------


@pytest.mark.req("SIDE-007", "SIDE-024", "SIDE-053", "SIDE-017")
def test_framing_is_one_plugin_context_at_the_head(fresh: Implementation) -> None:
    make_parent(fresh, options=TOOLS_OPTIONS)
    result = fresh.call("side.fork", parent="parent", child="side")
    turn(fresh, "side", "why?", "because")
    child = log(fresh, "side")

    def plugin_sourced_context() -> None:
        # the seed: a plugin-sourced context/message that tells the child to explain
        # without mutating or continuing the task -- in any words
        with check("SIDE-007", framing_seq=result.get("framingSeq")):
            framing = child["events"][result["framingSeq"]]
            assert framing["type"] == "context/message"
            assert framing["data"]["source"].get("kind") == "plugin"

    def one_at_the_head() -> None:
        expect_equal("SIDE-024", inv.framing_problems(child), [], what="framing problems")

    every(plugin_sourced_context, one_at_the_head)  # neither seed check hides the other
    framing = child["events"][result["framingSeq"]]
    framing_text = inv.text_of(framing["data"]["content"])
    # what the framing tells the child is meaning: a person's review, never pass/fail (D-199)
    review(
        "SIDE-007",
        framing_text,
        hints=inv.framing_meaning_problems(framing_text),
    )
    # the profile: the sidechat source, this meta, a one-shot injection turn right after the seed
    seed_length = child["header"]["seedLength"]
    head = child["events"][seed_length]
    with check("SIDE-053", framing=framing["data"], head=head):
        assert framing["data"]["source"] == inv.SIDECHAT
        assert framing["data"]["meta"] == {
            "kind": "sidechat/framing",
            "version": 1,
            "parentSession": "parent",
        }
        assert head["type"] == "turn/start"
        assert head["data"]["trigger"] == {"kind": "injection", "source": inv.SIDECHAT}
    # the first child request: inherited history, then the framing, then the prompt
    request = fresh.call("agent.requests", agent="side")[0]
    inherited = inv.derive(child["events"][:seed_length])
    with check("SIDE-024", messages=request["messages"]):  # read for meaning (D-257)
        seen, inherited_read = inv.meaning(request["messages"]), inv.meaning(inherited)
        assert seen[: len(inherited_read)] == inherited_read
        framing_read = inv.meaning([{"role": "user", "content": framing["data"]["content"]}])
        assert seen[len(inherited_read) : len(inherited_read) + 1] == framing_read
    expect(
        "SIDE-017",
        request["system"] == fresh.call("agent.system", agent="parent")["system"],
        "the framing changed the child's system prompt",
    )


@pytest.mark.req("SIDE-054", "SIDE-024")
def test_frame_later_once_and_only_at_the_head(fresh: Implementation) -> None:
    make_parent(fresh)
    result = fresh.call("side.fork", parent="parent", child="side", frame=False)
    with check("SIDE-054"):
        assert result["framingSeq"] is None
    seq = fresh.call("side.frame", child="side")["seq"]
    expect_equal("SIDE-024", inv.framing_problems(log(fresh, "side")), [], what="problems")
    expect_equal("SIDE-054", log(fresh, "side")["events"][seq]["type"], "context/message")
    still = unchanged(fresh, "side", "parent")
    with check("SIDE-054"):
        assert fresh.error_code("side.frame", child="side") == "DSH_SIDE_ALREADY_FRAMED"
    with check("SIDE-024"):
        still()
    fresh.call("side.fork", parent="parent", child="late", frame=False)
    turn(fresh, "late", "hello", "hi")
    check_late = unchanged(fresh, "late", "parent")
    with check("SIDE-054"):
        assert fresh.error_code("side.frame", child="late") == "DSH_SIDE_FRAME_NOT_AT_HEAD"
        assert fresh.error_code("side.frame", child="parent") == "DSH_SIDE_NOT_A_CHILD"
        assert fresh.error_code("side.frame", child="nobody") == "DSH_AGENT_NOT_FOUND"
    with check("SIDE-024"):
        check_late()


# --- merge-back -----------------------------------------------------------------------------


def _forked_with_handback(impl: Implementation, answer: str, cap: int | None = None) -> None:
    make_parent(impl)
    impl.call("side.fork", parent="parent", child="side")
    turn(impl, "side", "explore an idea", "the idea works")
    handback(impl, "side", answer, cap)


@pytest.mark.req(
    "SIDE-009", "SIDE-010", "SIDE-025", "SIDE-055", "SIDE-056", "SIDE-060", "SIDE-023", "SIDE-090"
)
def test_merge_back_adds_one_sidechat_context_seen_at_its_position(fresh: Implementation) -> None:
    _forked_with_handback(fresh, "Use approach B; A leaks memory.")
    before = log(fresh, "parent")
    result = fresh.call("side.mergeBack", parent="parent", child="side")
    after = log(fresh, "parent")
    new = after["events"][len(before["events"]) :]
    with check("SIDE-025", new=new):
        assert after["events"][: len(before["events"])] == before["events"]
        assert len(inv.sidechat_contexts(new)) == 1
        assert [e["type"] for e in new if inv.is_message(e)] == ["context/message"]
    merged = inv.sidechat_contexts(new)[0]
    merged_text = inv.text_of(merged["data"]["content"])
    with check("SIDE-009", merged=merged["data"], result=result):
        assert merged["seq"] == result["seq"]
        assert "Use approach B; A leaks memory." in merged_text
    expect("SIDE-025", inv.length_capped(merged_text, 4096), "over the default cap")
    expect("SIDE-055", inv.utf8_len(merged_text) <= 4096, "over 4096 UTF-8 bytes")
    expect_equal(
        "SIDE-056",
        merged["data"]["content"],
        text(HEADING + "Use approach B; A leaks memory."),
        what="merged content",
    )
    expect(
        "SIDE-060",
        merged["data"]["meta"]
        == result["meta"]
        == {
            "kind": "sidechat/handback",
            "version": 1,
            "sessionId": "side",
            "originalBytes": inv.utf8_len("Use approach B; A leaks memory."),
            "omittedBytes": 0,
            "truncated": False,
        },
        "the handback meta",
        meta=merged["data"]["meta"],
    )
    # the next parent request sees it where the log puts it; replay agrees
    turn(fresh, "parent", "continue with the plan", "continuing")
    final = log(fresh, "parent")
    request = fresh.call("agent.requests", agent="parent")[-1]
    position = [m for m in map(inv.message_of, inv.surface(final["events"])) if m].index(
        {"role": "user", "content": merged["data"]["content"]}
    )
    requests = fresh.call("agent.requests", agent="parent")
    with check("SIDE-010"):
        assert inv.meaning(request["messages"][position : position + 1]) == inv.meaning(
            [{"role": "user", "content": merged["data"]["content"]}]
        )
        assert inv.request_problems(requests, final) == []
    expect_equal("SIDE-090", inv.request_problems(requests, final, exact=True), [])
    # a reload of the persisted log derives the same messages at the same position
    fresh.call(
        "agent.create",
        id="reloaded",
        header=final["header"] | {"id": "reloaded"},
        seed=final["events"],
    )
    turn(fresh, "reloaded", "after reload", "ok")
    reloaded = fresh.call("agent.requests", agent="reloaded")[-1]
    with check("SIDE-023"):
        assert reloaded["messages"][position] == request["messages"][position]
        assert reloaded["messages"][: len(request["messages"])] == request["messages"]


@pytest.mark.req("SIDE-059", "SIDE-010", "SIDE-025", "SIDE-090")
@pytest.mark.parametrize("micro_steps", range(12))
def test_merge_into_a_running_parent_follows_inject(
    fresh: Implementation, micro_steps: int
) -> None:
    make_parent(fresh, options=TOOLS_OPTIONS, turns=1)
    fresh.call("side.fork", parent="parent", child="side")
    handback(fresh, "side", "B is better")
    fresh.call(
        "agent.script",
        agent="parent",
        responses=[
            {"toolCalls": [{"name": "read_file"}, {"name": "read_file", "id": "second"}]},
            {"text": "done"},
        ],
    )
    fresh.call("agent.send", agent="parent", content=text("work"))
    for _ in range(micro_steps):
        fresh.call("agent.step", agent="parent")
    state = fresh.call("agent.state", agent="parent")
    before = log(fresh, "parent")
    asked = len(fresh.call("agent.requests", agent="parent"))
    result = fresh.call("side.mergeBack", parent="parent", child="side")
    fresh.call("agent.run", agent="parent")
    final = log(fresh, "parent")
    merged = inv.sidechat_contexts(final["events"][len(before["events"]) :])
    expect_equal("SIDE-025", len(merged), 1, what="merge-back contexts")
    context = merged[0]
    with check("SIDE-059", state=state, result=result):
        if not state["turnOpen"]:
            assert result["deferred"] is False
            assert final["events"][context["seq"] - 1]["type"] == "turn/start"
            assert final["events"][context["seq"] - 1]["data"]["trigger"]["kind"] == "injection"
        elif state["toolBatch"]:
            assert result["deferred"] is True
            assert result["seq"] is None
            # after the batch's results, before its step/end
            window = final["events"][len(before["events"]) : context["seq"]]
            assert all(e["type"] in ("tool/call", "tool/result") for e in window)
            assert final["events"][context["seq"] + 1]["type"] == "step/end"
        else:
            assert result["deferred"] is False
            assert context["seq"] == len(before["events"])
    requests = fresh.call("agent.requests", agent="parent")
    problems = inv.request_problems(requests, final)
    expect_equal("SIDE-010", problems, [], what="request problems")
    exact = inv.request_problems(requests, final, exact=True)
    expect_equal("SIDE-090", exact, [], what="request problems (bytes)")
    # the first request the parent sends after the merge sees it (read for meaning,
    # whatever events mark the host's steps: D-257)
    later = requests[asked:]
    if later:
        seen = inv.meaning([{"role": "user", "content": context["data"]["content"]}])
        expect(
            "SIDE-010",
            seen[0] in inv.meaning(later[0]["messages"]),
            "the next request does not see the merge-back",
        )


@pytest.mark.req("SIDE-056", "SIDE-031", "SIDE-025", "SIDE-055", "SIDE-060")
@settings(max_examples=examples(40))
@given(
    cap=st.integers(min_value=256, max_value=2048),
    unit=st.sampled_from(["a", "界", "😀", "é", "\ud800"]),
    repeat=st.integers(min_value=1, max_value=3000),
)
def test_a_long_model_handback_is_truncated_head_tail_within_the_cap(
    impl: Implementation, cap: int, unit: str, repeat: int
) -> None:
    impl.call("reset")
    answer = "START " + unit * repeat + " END"
    _forked_with_handback(impl, answer, cap)
    result = impl.call("side.mergeBack", parent="parent", child="side", cap=cap)
    merged = inv.sidechat_contexts(log(impl, "parent")["events"])[-1]
    body = inv.text_of(merged["data"]["content"])
    expect_equal("SIDE-025", body, result["text"], what="merged context text")
    expect("SIDE-031", inv.length_capped(body, cap), "the merge is not capped", cap=cap)
    expect("SIDE-055", inv.utf8_len(body) <= cap, "over the cap in UTF-8 bytes", cap=cap)
    original = inv.utf8_len(answer)
    meta = result["meta"]
    expect_equal("SIDE-060", meta["originalBytes"], original, what="originalBytes")
    with check("SIDE-056", cap=cap, body=body, meta=meta):
        assert body.startswith(HEADING)
        if inv.utf8_len(HEADING) + original <= cap:
            assert body == HEADING + answer
            assert meta["truncated"] is False
            return
        assert meta["truncated"] is True
        notice = f"\n[\u2026 omitted {meta['omittedBytes']} UTF-8 bytes \u2026]"
        assert body.endswith(notice)
        kept = body[len(HEADING) : -len(notice)]
        assert inv.utf8_len(kept) + meta["omittedBytes"] == original
        assert kept.startswith("START")
        assert kept.endswith("END")


@pytest.mark.req("SIDE-055")
@pytest.mark.parametrize("cap", [0, 1, 255, 65537, -4096, 4096.5, "4096", True, [4096]])
def test_an_invalid_cap_is_refused_and_changes_nothing(fresh: Implementation, cap: object) -> None:
    _forked_with_handback(fresh, "note")
    check = unchanged(fresh, "parent", "side")
    assert fresh.error_code("side.mergeBack", parent="parent", child="side", cap=cap) == (
        "DSH_SIDE_INVALID_CAP"
    )
    assert fresh.error_code("side.askHandback", child="side", cap=cap) == "DSH_SIDE_INVALID_CAP"
    check()


@pytest.mark.req("SIDE-055")
@pytest.mark.parametrize("cap", [256, 4096, 65536])
def test_cap_bounds_are_inclusive(fresh: Implementation, cap: int) -> None:
    _forked_with_handback(fresh, "x" * 70000, cap)
    result = fresh.call("side.mergeBack", parent="parent", child="side", cap=cap)
    assert inv.utf8_len(result["text"]) <= cap


@pytest.mark.req("SIDE-055")
def test_the_default_cap_is_4096_bytes(fresh: Implementation) -> None:
    _forked_with_handback(fresh, "界" * 5000)
    result = fresh.call("side.mergeBack", parent="parent", child="side")
    assert 4096 - 3 < inv.utf8_len(result["text"]) <= 4096


@pytest.mark.req("SIDE-031", "SIDE-057")
@given(extra=st.integers(min_value=-3, max_value=3), unit=st.sampled_from(["a", "界"]))
# Fixed (D-400): over the cap in every unit the seed check accepts (a host merging the
# text whole breaks it), and under it.
@example(extra=3, unit="a")
@example(extra=-3, unit="界")
@settings(max_examples=examples(20))
def test_an_explicit_handback_is_never_altered(impl: Implementation, extra: int, unit: str) -> None:
    """SIDE-031 (seed): whatever a host does with a handback text over the cap, what it
    merges is capped; SIDE-057 (profile): the reference rejects it and merges nothing."""
    impl.call("reset")
    make_parent(impl, turns=1)
    impl.call("side.fork", parent="parent", child="side")
    cap = 300
    budget = cap - inv.utf8_len(HEADING)
    note = unit * ((budget + extra * inv.utf8_len(unit)) // inv.utf8_len(unit))
    same = unchanged(impl, "parent")
    before = len(log(impl, "parent")["events"])
    # Judged on what the host did, whatever its heading's length (the seed's cap holds
    # for what is merged); the reference's 26-byte heading decides only the profile.
    code = impl.error_code("side.mergeBack", parent="parent", child="side", cap=cap, text=note)
    added = log(impl, "parent")["events"][before:]
    merged = [inv.text_of(e["data"]["content"]) for e in added if e["type"] == "context/message"]
    with check("SIDE-031", merged=merged, cap=cap):
        assert all(inv.length_capped(t, cap) for t in merged), "a merge exceeds its cap"
    if inv.utf8_len(HEADING + note) > cap:
        expect_equal("SIDE-057", code, "DSH_SIDE_HANDBACK_OVER_CAP", what="error code")
        with check("SIDE-057"):
            same()
    else:
        expect_equal("SIDE-057", merged, [HEADING + note], what="merged text", code=code)


@pytest.mark.req("SIDE-058")
def test_no_handback_until_the_child_answers_the_request(fresh: Implementation) -> None:
    make_parent(fresh)
    fresh.call("side.fork", parent="parent", child="side")
    turn(fresh, "side", "ordinary question", "ordinary answer (not a handback)")
    check = unchanged(fresh, "parent")
    assert (
        fresh.error_code("side.mergeBack", parent="parent", child="side") == "DSH_SIDE_NO_HANDBACK"
    )
    fresh.call("side.askHandback", child="side")
    assert (
        fresh.error_code("side.mergeBack", parent="parent", child="side") == "DSH_SIDE_NO_HANDBACK"
    )
    fresh.call("agent.script", agent="side", responses=[{"error": "overloaded"}])
    fresh.call("agent.run", agent="side")
    assert (
        fresh.error_code("side.mergeBack", parent="parent", child="side") == "DSH_SIDE_NO_HANDBACK"
    )
    check()
    handback(fresh, "side", "finally a note")
    assert fresh.call("side.mergeBack", parent="parent", child="side")["text"] == HEADING + (
        "finally a note"
    )
    asks = [
        e
        for e in log(fresh, "side")["events"]
        if e["type"] == "user/message" and e["data"]["source"] == inv.SIDECHAT
    ]
    assert asks
    assert "4070 UTF-8 bytes" in inv.text_of(asks[-1]["data"]["content"])


@pytest.mark.req("SIDE-061", "SIDE-063")
def test_only_the_parents_own_live_children_merge(fresh: Implementation) -> None:
    _forked_with_handback(fresh, "note")
    make_parent(fresh, "other")
    fresh.call("side.fork", parent="other", child="other-side")
    same = unchanged(fresh, "parent", "other")
    codes = {
        "wrong parent": fresh.error_code("side.mergeBack", parent="other", child="side"),
        "not a child": fresh.error_code("side.mergeBack", parent="side", child="other"),
        "unknown parent": fresh.error_code("side.mergeBack", parent="nobody", child="side"),
        "unknown child": fresh.error_code("side.mergeBack", parent="parent", child="nobody"),
    }
    with check("SIDE-061", codes=codes):
        assert codes == {
            "wrong parent": "DSH_SIDE_NOT_A_CHILD",
            "not a child": "DSH_SIDE_NOT_A_CHILD",
            "unknown parent": "DSH_AGENT_NOT_FOUND",
            "unknown child": "DSH_AGENT_NOT_FOUND",
        }
        same()
    # a disposed child's handback is durable history and can still be merged (D-100)
    fresh.call("agent.dispose", agent="side")
    with check("SIDE-063"):
        merged = fresh.call("side.mergeBack", parent="parent", child="side")
        assert merged["meta"]["sessionId"] == "side"
    # a disposed parent cannot receive one
    fresh.call("agent.dispose", agent="parent")
    check_disposed = unchanged(fresh, "parent")
    with check("SIDE-061"):
        code = fresh.error_code("side.mergeBack", parent="parent", child="side")
        assert code == "DSH_AGENT_DISPOSED"
        check_disposed()


@pytest.mark.req("SIDE-062")
def test_forking_an_unknown_or_disposed_session_fails(fresh: Implementation) -> None:
    make_parent(fresh)
    assert fresh.error_code("side.fork", parent="nobody", child="side") == "DSH_AGENT_NOT_FOUND"
    assert fresh.error_code("side.fork", parent="parent", child="parent") == "DSH_INVALID_ARGUMENT"
    fresh.call("agent.dispose", agent="parent")
    check = unchanged(fresh, "parent")
    assert fresh.error_code("side.fork", parent="parent", child="side") == "DSH_AGENT_DISPOSED"
    check()
    assert fresh.error_code("agent.state", agent="side") == "DSH_AGENT_NOT_FOUND"


@pytest.mark.req("SIDE-015", "SIDE-063")
def test_the_child_outlives_the_parents_turn_and_the_parent(fresh: Implementation) -> None:
    make_parent(fresh)
    fresh.call("agent.send", agent="parent", content=text("long task"))
    fresh.call("agent.step", agent="parent")
    fresh.call("side.fork", parent="parent", child="side")
    fresh.call("agent.cancel", agent="parent")
    fresh.call("agent.run", agent="parent")
    with check("SIDE-015"):
        turn(fresh, "side", "still there?", "yes")
        fresh.call("agent.dispose", agent="parent")
        turn(fresh, "side", "and now?", "still yes")
        assert fresh.call("agent.state", agent="side")["status"] == "idle"
        assert [e["type"] for e in log(fresh, "side")["events"]][-1] == "turn/end"
    make_parent(fresh, "p2")
    fresh.call("side.fork", parent="p2", child="s2")
    same = unchanged(fresh, "p2")
    fresh.call("agent.dispose", agent="s2")
    with check("SIDE-063"):
        same()
        turn(fresh, "p2", "parent continues", "fine")


@pytest.mark.req("SIDE-019", "SIDE-013")
def test_no_sidechat_events_and_no_fork_metadata(fresh: Implementation) -> None:
    _forked_with_handback(fresh, "note")
    fresh.call("side.mergeBack", parent="parent", child="side")
    for aid in ("parent", "side"):
        session = log(fresh, aid)
        types = [e["type"] for e in session["events"]]
        expect("SIDE-019", not [t for t in types if t.startswith("sidechat/")], "sidechat/*")
        with check("SIDE-013", header=session["header"]):
            assert "forkName" not in session["header"]
            assert "mergedInto" not in session["header"]


@pytest.mark.req("SIDE-029", "SIDE-067", "SIDE-004", "SIDE-005", "SIDE-020", "SIDE-050")
def test_a_compacted_source_forks_its_compacted_view(fresh: Implementation) -> None:
    make_parent(fresh, turns=2)
    fresh.call("side.compact", agent="parent", summary="Decided to use B.")
    turn(fresh, "parent", "recent question", "recent answer")
    before = log(fresh, "parent")
    result = fresh.call("side.fork", parent="parent", child="side")
    expect_equal("SIDE-067", result["compacted"], True, what="compacted")
    inv.expect_fork(before, log(fresh, "parent"), log(fresh, "side"), "parent")
    turn(fresh, "side", "what was decided?", "B")
    dumped = inv.canonical_json(fresh.call("agent.requests", agent="side"))
    with check("SIDE-029", requests=dumped):
        assert "Decided to use B." in dumped
        assert "recent question" in dumped
        assert "parent question 1" not in dumped
        assert "parent answer 2" not in dumped
        fresh.call("side.fork", parent="side", child="nested")
    make_parent(fresh, "plain")
    plain = fresh.call("side.fork", parent="plain", child="plain-side")
    expect_equal("SIDE-067", plain["compacted"], False, what="compacted")


@pytest.mark.req("SIDE-031", "SIDE-025", "SIDE-055", "SIDE-010")
def test_every_repeated_handback_is_capped_and_earlier_ones_stay(fresh: Implementation) -> None:
    make_parent(fresh)
    fresh.call("side.fork", parent="parent", child="side")
    caps = [256, 300, 4096]
    for n, cap in enumerate(caps):
        handback(fresh, "side", f"note {n} " + "z" * 400, cap)
        previous = inv.sidechat_contexts(log(fresh, "parent")["events"])
        fresh.call("side.mergeBack", parent="parent", child="side", cap=cap)
        now = inv.sidechat_contexts(log(fresh, "parent")["events"])
        merged = inv.text_of(now[-1]["data"]["content"])
        expect("SIDE-031", now[:-1] == previous, "a merge rewrote an earlier handback")
        expect_equal("SIDE-025", len(now), n + 1, what="merge-back contexts")
        expect("SIDE-031", inv.length_capped(merged, cap), "not capped", cap=cap, text=merged)
        expect("SIDE-055", inv.utf8_len(merged) <= cap, "over the cap in UTF-8 bytes", cap=cap)
    turn(fresh, "parent", "next", "ok")
    request = fresh.call("agent.requests", agent="parent")[-1]
    for context in inv.sidechat_contexts(log(fresh, "parent")["events"]):
        seen = inv.meaning([{"role": "user", "content": context["data"]["content"]}])
        expect(
            "SIDE-010",
            seen[0] in inv.meaning(request["messages"]),
            "the next request does not see a handback",
        )


@pytest.mark.req("SIDE-028", "SIDE-066")
@pytest.mark.capability("side.deny-gate")
def test_the_deny_gate_refuses_listed_tools_of_the_child_only(fresh: Implementation) -> None:
    make_parent(fresh, options=TOOLS_OPTIONS, turns=1)
    fresh.call("side.fork", parent="parent", child="gated")
    fresh.call("side.fork", parent="parent", child="open")
    fresh.call("side.gate", child="gated", deny=["write_file"])
    with check("SIDE-066"):
        assert fresh.error_code("side.gate", child="parent", deny=["write_file"]) == (
            "DSH_SIDE_NOT_A_CHILD"
        )
    calls = {"toolCalls": [{"name": "write_file", "id": "w"}, {"name": "read_file", "id": "r"}]}
    for aid in ("gated", "open", "parent"):
        fresh.call("agent.script", agent=aid, responses=[calls, {"text": "done"}])
        fresh.call("agent.send", agent=aid, content=text("edit the file"))
        fresh.call("agent.run", agent=aid)

    def results(aid: str) -> dict[str, dict[str, Any]]:
        return {
            e["data"]["callId"]: e["data"]
            for e in log(fresh, aid)["events"]
            if e["type"] == "tool/result" and e["data"]["callId"] in ("w", "r")
        }

    gated, open_, parent = results("gated"), results("open"), results("parent")
    with check("SIDE-066", gated=gated):
        assert gated["w"]["isError"] is True
        assert gated["w"]["error"] == {"name": "write_file", "code": "SIDE_TOOL_DENIED"}
        assert "read-only" in inv.text_of(gated["w"]["content"])
        assert gated["r"] == open_["r"]
        assert open_["w"]["isError"] is False
        assert parent["w"]["isError"] is False
    # apart from the denied result, the mechanics of what each child did are identical
    # (each from its own seed: a fork defect is SIDE-020's, not the gate's)
    g, o = (inv.appended(log(fresh, aid)) for aid in ("gated", "open"))
    with check("SIDE-028"):
        assert len(g) == len(o)
        assert [e["type"] for e in g] == [e["type"] for e in o]
        assert inv.framing_problems(log(fresh, "gated")) == []


# --- concurrency ------------------------------------------------------------------------------


@pytest.mark.req("SIDE-026", "SIDE-065", "SIDE-090")
def test_interleaved_parent_and_child_have_no_cross_talk(fresh: Implementation) -> None:
    make_parent(fresh, options=TOOLS_OPTIONS)
    fresh.call("side.fork", parent="parent", child="side")
    parent_base = len(log(fresh, "parent")["events"])
    notes = {a: len(fresh.call("agent.notifications", agent=a)) for a in ("parent", "side")}
    for aid in ("parent", "side"):
        fresh.call(
            "agent.script",
            agent=aid,
            responses=[
                {"toolCalls": [{"name": "read_file", "id": f"{aid}-call"}]},
                {"text": f"{aid.upper()}-ANSWER"},
            ],
        )
        fresh.call("agent.send", agent=aid, content=text(f"{aid.upper()}-PROMPT"))
    fresh.call("agent.steer", agent="side", content=text("SIDE-STEER"))
    busy, ticks = True, 0
    while busy:
        busy, ticks = False, ticks + 1
        for aid in ("side", "parent"):
            if fresh.call("agent.step", agent=aid)["step"] is not None:
                busy = True
        if ticks == 3:
            fresh.call("agent.steer", agent="parent", content=text("PARENT-STEER"))
        if ticks == 5:
            fresh.call("agent.cancel", agent="side")
        assert ticks < 200, "setup: the interleaving ends"
    for aid, other in (("parent", "SIDE-"), ("side", "PARENT-")):
        session = log(fresh, aid)
        tail = session["events"][
            parent_base if aid == "parent" else session["header"]["seedLength"] :
        ]
        notifications = fresh.call("agent.notifications", agent=aid)[notes[aid] :]
        expect("SIDE-065", all(n["agent"] == aid for n in notifications), "misattributed")
        with check("SIDE-026", agent=aid):
            assert other not in inv.canonical_json(tail)
            assert other not in inv.canonical_json(fresh.call("agent.requests", agent=aid))
            assert other not in inv.canonical_json(notifications)
            assert inv.request_problems(fresh.call("agent.requests", agent=aid), session) == []
        exact = inv.request_problems(fresh.call("agent.requests", agent=aid), session, exact=True)
        expect_equal("SIDE-090", exact, [], what="request problems (bytes)", agent=aid)


# --- differential --------------------------------------------------------------------------


def _scenario(impl: Implementation) -> dict[str, Any]:
    impl.call("reset")
    make_parent(impl, options=TOOLS_OPTIONS)
    impl.call("side.compact", agent="parent", summary="so far")
    turn(impl, "parent", "one more", "sure")
    fork = impl.call("side.fork", parent="parent", child="side")
    turn(impl, "side", "explain", "explained")
    handback(impl, "side", "long " * 300, 512)
    merge = impl.call("side.mergeBack", parent="parent", child="side", cap=512)
    turn(impl, "parent", "go on", "going")
    return {
        "fork": fork,
        "merge": merge,
        "parent": log(impl, "parent"),
        "side": log(impl, "side"),
        "requests": [impl.call("agent.requests", agent=a) for a in ("parent", "side")],
    }


@pytest.mark.req("REF-008")
@pytest.mark.differential
def test_matches_reference_model(impl: Implementation, oracle: Implementation) -> None:
    assert inv.canonical_json(_scenario(impl)) == inv.canonical_json(_scenario(oracle))


@pytest.mark.req("REF-008", "SIDE-055")
@pytest.mark.differential
@settings(max_examples=examples(30))
@given(js_strings(max_size=40), st.integers(min_value=256, max_value=600))
def test_truncation_matches_reference_model(
    impl: Implementation, oracle: Implementation, unit: str, cap: int
) -> None:
    out = []
    for target in (impl, oracle):
        target.call("reset")
        _forked_with_handback(target, "S" + unit * 30 + "E", cap)
        out.append(target.call("side.mergeBack", parent="parent", child="side", cap=cap))
    expect_equal("REF-008", out[0], out[1], what="merge result")
    expect("SIDE-055", inv.utf8_len(out[0]["text"]) <= cap, "over the cap", cap=cap)


AGENT_OPS = st.sampled_from(["send", "send-tools", "steer", "step", "step", "cancel", "run"])


def _apply(impl: Implementation, aid: str, op: str, n: int) -> None:
    mark = f"{aid}-{n}"
    if op in ("send", "send-tools"):
        responses: list[dict[str, Any]] = [{"text": f"answer {mark}"}]
        if op == "send-tools":
            responses.insert(0, {"toolCalls": [{"name": "read_file", "id": f"call-{mark}"}]})
        impl.call("agent.script", agent=aid, responses=responses)
        impl.call("agent.send", agent=aid, content=text(f"prompt {mark}"))
    elif op == "steer":
        impl.call("agent.steer", agent=aid, content=text(f"steer {mark}"))
    elif op == "step":
        impl.call("agent.step", agent=aid)
    elif op == "cancel":
        impl.call("agent.cancel", agent=aid)
    else:
        impl.call("agent.run", agent=aid)


def _observe(impl: Implementation, aid: str) -> str:
    return inv.canonical_json(
        [impl.call(op, agent=aid) for op in ("agent.log", "agent.requests", "agent.notifications")]
    )


@pytest.mark.req("SIDE-065")
@settings(max_examples=examples(25))
@given(
    script=st.lists(st.tuples(st.sampled_from(["parent", "side"]), AGENT_OPS), max_size=25),
    advance=st.integers(min_value=0, max_value=6),
)
def test_interleaving_commutes(
    impl: Implementation, script: list[tuple[str, str]], advance: int
) -> None:
    """Running parent and child interleaved gives each the history it has when run alone."""
    items = [(n, aid, op) for n, (aid, op) in enumerate(script, start=1)]
    alone = sorted(items, key=lambda item: item[1] == "side")  # all parent ops, then the child's
    observed = []
    for order in (items, alone):
        impl.call("reset")
        make_parent(impl, options=TOOLS_OPTIONS, turns=1)
        _apply(impl, "parent", "send-tools", 0)
        for _ in range(advance):
            impl.call("agent.step", agent="parent")
        impl.call("side.fork", parent="parent", child="side")
        for n, aid, op in order:
            _apply(impl, aid, op, n)
        observed.append({aid: _observe(impl, aid) for aid in ("parent", "side")})
    assert observed[0] == observed[1]


@pytest.mark.req("SIDE-005", "SIDE-023")
def test_a_childs_log_and_lineage_survive_a_reload(fresh: Implementation) -> None:
    _forked_with_handback(fresh, "note")
    fresh.call("side.mergeBack", parent="parent", child="side")
    for aid in ("side", "parent"):
        session = log(fresh, aid)
        header = {**session["header"], "id": f"{aid}-copy"}
        fresh.call("agent.create", id=f"{aid}-copy", header=header, seed=session["events"])
        copy = log(fresh, f"{aid}-copy")
        with check("SIDE-023", agent=aid):
            assert copy["events"] == session["events"]
            assert copy["header"] == header
            assert inv.derive(copy["events"]) == inv.derive(session["events"])
    expect_equal(
        "SIDE-005", log(fresh, "side-copy")["header"]["parentSession"], "parent", what="lineage"
    )
