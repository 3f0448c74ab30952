"""INBOX-*: message ownership -- records, prompt-submit admission, steering, drops.

Expected values are written out from the seed and research note B §2, never computed by
the model; differential checks against the oracle live in test_inbox_stateful.py.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect_equal
from dsh_conformance.conformance.agent_support import (
    USER,
    AgentHandle,
    context,
    new_agent,
    of_type,
    plugin,
    same_items,
    text,
)

pytestmark = pytest.mark.capability("agent")

INVALID = "DSH_AGENT_INVALID_MESSAGE"
DISPOSED = "DSH_AGENT_DISPOSED"
HOSTILE = ["NaN", "Infinity", "-Infinity", "-0", "undefined", "cycle", "non-string-key", "bigint"]


def step_until(agent: AgentHandle, name: str) -> None:
    """Run driver micro-steps up to and including the first one called *name*."""
    for _ in range(200):
        got = agent.step()
        if got == name:
            return
        assert got is not None, f"the agent went quiescent before a {name!r} step"
    raise AssertionError(f"no {name!r} step")


def message_types(agent: AgentHandle) -> list[str]:
    return [t for t in agent.types() if t.endswith("/message") or t == "prompt/blocked"]


# --- records -------------------------------------------------------------------------------


@pytest.mark.req("INBOX-001", "INBOX-004")
def test_send_queues_one_record_with_resolved_source(impl: Implementation) -> None:
    agent = new_agent(impl)
    contexts = [context("S", meta={"n": 1}), context("P", placement="prompt-prefix")]
    agent.call("agent.send", content=text("hello"), contexts=contexts)
    record = {"content": text("hello"), "source": USER, "contexts": contexts}
    with check("INBOX-001", state=agent.state()):
        assert agent.state()["queued"] == [record]
        assert agent.state()["status"] == "idle", "send() does not run the driver"
        assert agent.events() == []
    expect_equal(
        "INBOX-004",
        agent.notifications(),
        [{"event": "agent/queued", "agent": agent.id, **record, "steering": False}],
        what="notifications",
    )


@pytest.mark.req("INBOX-001")
def test_a_plugin_source_is_kept_and_contexts_default_to_empty(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("x"), source=plugin("bot"))
    assert agent.state()["queued"] == [
        {"content": text("x"), "source": plugin("bot"), "contexts": []}
    ]
    agent.run()
    # The prompt event as the record was taken; the turn/start trigger around it is the
    # reference's event vocabulary (ENV-064 judges the source it keeps).
    users = of_type(agent.events(), "user/message")
    assert [u["data"] for u in users] == [{"content": text("x"), "source": plugin("bot")}]


@pytest.mark.req("INBOX-002")
@pytest.mark.parametrize("verb", ["agent.send", "agent.steer"])
@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("where", ["content", "source", "context", "meta"])
def test_non_lossless_input_is_rejected_before_anything_happens(
    impl: Implementation, verb: str, kind: str, where: str
) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("first"))
    agent.step()  # running: steer() takes the steering path
    before = (agent.state(), agent.notifications(), agent.events())
    bad = {"$hostile": kind}
    args: dict[str, Any] = {"content": text("x")}
    if where == "content":
        args["content"] = [{"type": "text", "text": "x", "extra": bad}]
    elif where == "source":
        args["source"] = {"kind": "plugin", "plugin": bad}
    elif where == "context":
        args["contexts"] = [{"source": plugin("c"), "content": [bad]}]
    else:
        args["contexts"] = [{"source": plugin("c"), "content": text("c"), "meta": {"m": bad}}]
    assert agent.error_code(verb, **args) == INVALID
    assert (agent.state(), agent.notifications(), agent.events()) == before


@pytest.mark.req("INBOX-002")
def test_unsafe_integers_are_rejected_and_safe_numbers_accepted(impl: Implementation) -> None:
    agent = new_agent(impl)
    assert agent.error_code("agent.send", content=[{"type": "n", "v": 2**53}]) == INVALID
    assert agent.error_code("agent.send", content=[{"type": "n", "v": -(2**53)}]) == INVALID
    ok = [{"type": "n", "v": 2**53 - 1, "w": -1.5, "x": 1e300, "y": 0, "z": None}]
    agent.call("agent.send", content=ok)
    assert agent.state()["queued"][0]["content"] == ok


@pytest.mark.req("INBOX-001")
@pytest.mark.parametrize("op", ["agent.send", "agent.steer"])
def test_the_record_is_deeply_frozen(impl: Implementation, op: str) -> None:
    """INBOX-001 (seed: "one deeply frozen lossless-JSON inbox record"): changing what the
    caller passed, at any depth, after the call returned changes nothing the agent keeps."""
    agent = new_agent(impl)
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "deep", "extra": {"list": [1, {"k": "v"}]}}
    ]
    contexts: list[dict[str, Any]] = [
        context("C", placement="prompt-prefix", meta={"a": {"b": [1, [2, {"c": "d"}]]}}),
        context("", meta={"empty": []}),
    ]
    pristine = copy.deepcopy((content, contexts))
    agent.call(op, content=content, contexts=contexts)
    content[0]["extra"]["list"][1]["k"] = "MUTATED"
    contexts[0]["meta"]["a"]["b"][1][1]["c"] = "MUTATED"
    contexts[0]["content"][0]["text"] = "MUTATED"
    contexts[1]["meta"]["empty"].append("MUTATED")
    state = agent.state()  # queued, or steering: where an idle steer() goes is INBOX-005's
    with check("INBOX-001", state=state):
        assert "MUTATED" not in repr(state)
        (record,) = state["queued"] + state.get("steering", [])
        assert (record["content"], record["contexts"]) == pristine
    agent.run()
    with check("INBOX-001", events=agent.events()):
        assert "MUTATED" not in repr((agent.events(), agent.requests()))


@pytest.mark.req("INBOX-003")
def test_caller_mutation_after_acceptance_changes_nothing(impl: Implementation) -> None:
    agent = new_agent(impl)
    content = text("original")
    source = {"kind": "plugin", "plugin": "orig"}
    contexts = [context("CTX", placement="separate", meta={"m": [1]}), context("SEP")]
    pristine = copy.deepcopy((content, source, contexts))
    agent.call("agent.send", content=content, source=source, contexts=contexts)
    content[0]["text"] = "MUTATED"
    content.append({"type": "text", "text": "MUTATED"})
    source["plugin"] = "MUTATED"
    contexts[0]["meta"]["m"].append("MUTATED")
    contexts[0]["placement"] = "prompt-prefix"
    contexts[1]["content"][0]["text"] = "MUTATED"
    contexts.append(context("MUTATED"))
    agent.run()
    observed = repr((agent.state(), agent.notifications(), agent.events(), agent.requests()))
    assert "MUTATED" not in observed
    c0, s0, x0 = pristine
    assert agent.notifications()[0]["contexts"] == x0
    user = of_type(agent.events(), "user/message")[0]
    assert user["data"] == {"content": c0, "source": s0}
    assert [e["data"] for e in of_type(agent.events(), "context/message")] == [
        {"content": x0[0]["content"], "source": x0[0]["source"], "meta": {"m": [1]}},
        {"content": x0[1]["content"], "source": x0[1]["source"]},
    ]


@pytest.mark.req("INBOX-003")
def test_outputs_are_copies(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("a"), contexts=[context("c")])
    queued = agent.state()["queued"]
    queued[0]["content"][0]["text"] = "MUTATED"
    agent.notifications()[0]["contexts"].clear()
    agent.run()
    events = agent.events()
    events[1]["data"]["content"][0]["text"] = "MUTATED"
    assert "MUTATED" not in repr((agent.events(), agent.notifications(), agent.requests()))


# --- steer / inject ------------------------------------------------------------------------


@pytest.mark.req("INBOX-005", "INBOX-034")
def test_steer_on_an_idle_agent_is_a_send(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.steer", content=text("s"), contexts=[context("c")])
    with check("INBOX-005", state=agent.state()):
        assert agent.notifications()[-1]["steering"] is False
        assert agent.state()["queued"]
        assert not agent.state()["steering"]
        agent.run()
        assert of_type(agent.events(), "steering/message") == []
        user = of_type(agent.events(), "user/message")
        assert [e["data"]["content"] for e in user] == [text("s")]
    # Whether an idle steer is a send is D-65's (INBOX-005); the note's INBOX-034 is that
    # only what takes the queued path (a user/message) is dispatched to prompt-submit.
    queued_path = [
        e for e in of_type(agent.events(), "user/message") if e["data"]["content"] == text("s")
    ]
    expect_equal(
        "INBOX-034",
        [s["content"] for s in agent.call("agent.submissions")],
        [text("s")] if queued_path else [],
        what="prompt-submit dispatches",
    )


@pytest.mark.req("INBOX-005")
def test_send_then_steer_before_the_driver_runs_makes_two_turns(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("a"))
    agent.call("agent.steer", content=text("b"))
    agent.run()
    assert [e["data"]["turn"] for e in of_type(agent.events(), "turn/start")] == [1, 2]
    assert of_type(agent.events(), "steering/message") == []


@pytest.mark.req("INBOX-034", "ENV-060", "INBOX-004", "ENV-090")
def test_steer_while_running_is_steering_and_skips_prompt_submit(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("a"))
    assert agent.step() == "claim", "setup: the driver reached the step the test needs"
    agent.call("agent.steer", content=text("s"))
    expect_equal(
        "INBOX-004",
        agent.notifications()[-1],
        {
            "event": "agent/queued",
            "agent": agent.id,
            "content": text("s"),
            "source": USER,
            "contexts": [],
            "steering": True,
        },
        what="the agent/queued notification",
    )
    agent.run()
    steering = of_type(agent.events(), "steering/message")
    expect_equal(
        "ENV-060",
        [{k: v for k, v in e["data"].items() if k != "turn"} for e in steering],
        [{"content": text("s"), "source": USER}],
        what="steering messages",
    )
    expect_equal(  # the turn it lands in is the micro-step schedule's (D-61)
        "ENV-090", [e["data"].get("turn") for e in steering], [1], what="steering turns"
    )
    expect_equal(
        "INBOX-034",
        [s["content"] for s in agent.call("agent.submissions")],
        [text("a")],
        what="prompt-submit dispatches",
    )


@pytest.mark.req("INBOX-006", "INBOX-007")
def test_idle_inject_is_a_one_shot_injection_turn(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.inject", content=text("note"), source=plugin("p"), meta={"k": 1})
    events = [(e["type"], e["data"]) for e in agent.events()]
    with check("INBOX-006", events=events):
        assert (
            "context/message",
            {"content": text("note"), "source": plugin("p"), "meta": {"k": 1}},
        ) in events
        assert agent.notifications() == [], "inject() never announces agent/queued"
    with check("INBOX-007", events=events):
        assert events == [
            ("turn/start", {"turn": 1, "trigger": {"kind": "injection", "source": plugin("p")}}),
            ("context/message", {"content": text("note"), "source": plugin("p"), "meta": {"k": 1}}),
            ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
        ]
        agent.call("agent.send", content=text("next"))
        agent.run()
        assert of_type(agent.events(), "turn/start")[-1]["data"]["turn"] == 2


@pytest.mark.req("INBOX-007")
def test_inject_without_meta_or_source_has_neither_meta_nor_a_plugin_source(
    impl: Implementation,
) -> None:
    agent = new_agent(impl)
    agent.call("agent.inject", content=text("n"))
    assert of_type(agent.events(), "context/message")[0]["data"] == {
        "content": text("n"),
        "source": USER,
    }


@pytest.mark.req("INBOX-006", "INBOX-008")
def test_inject_rejects_contexts(impl: Implementation) -> None:
    agent = new_agent(impl)
    code = agent.error_code("agent.inject", content=text("n"), contexts=[context("c")])
    with check("INBOX-006", code=code):
        assert code is not None, "inject() accepted contexts"
        assert agent.events() == []
        assert agent.notifications() == []
    expect_equal("INBOX-008", code, "DSH_INVALID_ARGUMENT", what="error code")


@pytest.mark.req("INBOX-002")
def test_inject_validates_before_writing(impl: Implementation) -> None:
    agent = new_agent(impl)
    assert agent.error_code("agent.inject", content=text("n"), meta={"$hostile": "NaN"}) == INVALID
    assert agent.events() == []


@pytest.mark.req("INBOX-007")
def test_inject_inside_an_open_turn_lands_at_the_current_position(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("a"))
    step_until(agent, "claim")
    agent.call("agent.inject", content=text("i"))
    agent.run()
    assert message_types(agent)[:2] == ["context/message", "user/message"]
    assert len(of_type(agent.events(), "turn/start")) == 1


@pytest.mark.req("INBOX-007")
def test_inject_during_a_tool_batch_waits_for_the_batch_results(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.script", responses=[{"toolCalls": [{"name": "a"}, {"name": "b"}]}])
    agent.call("agent.send", content=text("go"))
    step_until(agent, "model")
    agent.call("agent.inject", content=text("i"))
    assert agent.step() == "tool"
    agent.call("agent.inject", content=text("j"))
    agent.run()
    types = agent.types()
    first_after = types.index("tool/result", types.index("tool/result") + 1) + 1
    assert types[first_after : first_after + 3] == [
        "context/message",
        "context/message",
        "step/end",
    ]
    texts = [e["data"]["content"] for e in of_type(agent.events(), "context/message")]
    assert texts == [text("i"), text("j")]


# --- prompt-submit -------------------------------------------------------------------------


@pytest.mark.req("INBOX-010")
def test_attached_contexts_are_the_default_decision(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "pass"})
    agent.call("agent.send", content=text("a"), contexts=[context("c1"), context("c2")])
    agent.run()
    assert message_types(agent) == [
        "user/message",
        "context/message",
        "context/message",
        "assistant/message",
    ]


@pytest.mark.req("INBOX-012", "INBOX-140")
def test_an_allow_without_next_drops_the_attached_contexts(impl: Implementation) -> None:
    """INBOX-012 (seed): an allow returned without next() and without additionalContexts
    admits the prompt as it is, with no contexts or with the record's own (an absent field
    reads either way, D-445); none at all is the reference's reading (INBOX-140, D-66)."""
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "allow"})
    prefix = context("P", placement="prompt-prefix")
    agent.call("agent.send", content=text("a"), contexts=[prefix, context("c")])
    agent.run()
    user = of_type(agent.events(), "user/message")[0]["data"]
    shown = user["envelope"]["displayContent"] if "envelope" in user else user["content"]
    separate = [e["data"]["content"] for e in of_type(agent.events(), "context/message")]
    with check("INBOX-012", user=user, separate=separate):
        assert shown == text("a"), "not the record's content"
        kept = "envelope" in user and separate == [text("c")]
        assert kept or ("envelope" not in user and separate == []), "neither none nor kept"
    with check("INBOX-140"):  # the reference's reading: no contexts at all
        assert message_types(agent) == ["user/message", "assistant/message"]
        assert user == {"content": text("a"), "source": USER}


@pytest.mark.req("INBOX-012")
def test_a_wrapping_rewrite_keeps_downstream_contexts(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("REWRITTEN")})
    agent.call("agent.send", content=text("a"), contexts=[context("c1"), context("c2")])
    agent.run()
    user = of_type(agent.events(), "user/message")[0]["data"]
    assert user == {"content": text("REWRITTEN"), "source": USER}
    separate = [e["data"]["content"] for e in of_type(agent.events(), "context/message")]
    assert same_items(separate, [text("c1"), text("c2")])  # any order: the note names none


@pytest.mark.req("INBOX-012", "INBOX-140")
def test_an_allow_with_content_and_no_next_replaces_content_and_drops_contexts(
    impl: Implementation,
) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "allow", "content": text("X")})
    agent.call("agent.send", content=text("a"), contexts=[context("c")])
    agent.run()
    user = of_type(agent.events(), "user/message")[0]["data"]
    expect_equal("INBOX-012", user["content"], text("X"), what="the allowed content")
    with check("INBOX-140"):  # absent additionalContexts: none (the reference's reading)
        assert message_types(agent) == ["user/message", "assistant/message"]


@pytest.mark.req("INBOX-012", "INBOX-140")
def test_listener_contexts_are_placed_like_attached_ones(impl: Implementation) -> None:
    """INBOX-012 (seed): the listener's contexts join the attached ones, before or after
    them (the note names no order); before them is the reference's (INBOX-140, D-66)."""
    agent = new_agent(impl)
    hook_ctx = [context("HOOK1"), context("HOOK2", meta={"h": True})]
    agent.call("agent.listen", listener={"kind": "add-contexts", "contexts": hook_ctx})
    agent.call("agent.send", content=text("a"), contexts=[context("ATT")])
    agent.run()
    separate = [e["data"] for e in of_type(agent.events(), "context/message")]
    hooks = [
        {"content": text("HOOK1"), "source": plugin("ctx")},
        {"content": text("HOOK2"), "source": plugin("ctx"), "meta": {"h": True}},
    ]
    attached = [{"content": text("ATT"), "source": plugin("ctx")}]
    with check("INBOX-012", separate=separate):
        assert separate in (hooks + attached, attached + hooks), "not the chain's contexts"
    expect_equal("INBOX-140", separate, hooks + attached, what="hook contexts prepended")


@pytest.mark.req("INBOX-012")
def test_drop_contexts_and_the_first_listener_is_outermost(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("OUTER")})
    agent.call("agent.listen", listener={"kind": "drop-contexts"})
    agent.call("agent.send", content=text("a"), contexts=[context("c")])
    agent.run()
    assert message_types(agent) == ["user/message", "assistant/message"]
    assert of_type(agent.events(), "user/message")[0]["data"]["content"] == text("OUTER")


@pytest.mark.req("INBOX-011", "INBOX-013")
def test_a_block_writes_neither_user_message_nor_contexts(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("R")})
    agent.call("agent.listen", listener={"kind": "block", "reason": "no"})
    contexts = [context("P", placement="prompt-prefix"), context("S")]
    agent.call("agent.send", content=text("a"), contexts=contexts)
    agent.run()
    events = [(e["type"], e["data"]) for e in agent.events()]
    with check("INBOX-011", events=events):
        assert not [t for t, _ in events if t in ("user/message", "context/message")]
        assert agent.requests() == []
    expect_equal(
        "INBOX-013",
        events,
        [
            ("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": USER}}),
            ("prompt/blocked", {"content": text("a"), "source": USER, "reason": "no"}),
            ("turn/end", {"turn": 1, "reason": {"kind": "rejected", "reason": "no"}}),
        ],
        what="events",
    )


@pytest.mark.req("INBOX-014")
def test_a_throwing_listener_fails_the_turn_and_the_next_message_runs(
    impl: Implementation,
) -> None:
    agent = new_agent(impl)
    agent.call(
        "agent.listen", listener={"kind": "throw", "message": "boom", "code": "E1", "once": True}
    )
    agent.call("agent.send", content=text("a"), contexts=[context("c")])
    agent.call("agent.send", content=text("b"))
    agent.run()
    events = agent.events()
    assert [(e["type"], e["data"]) for e in events[:2]] == [
        ("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": USER}}),
        (
            "turn/end",
            {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "boom", "code": "E1"}},
        ),
    ]
    errors = [n for n in agent.notifications() if n["event"] == "agent/error"]
    assert errors == [
        {
            "event": "agent/error",
            "agent": agent.id,
            "turn": 1,
            "step": 0,
            "message": "boom",
            "code": "E1",
        }
    ]
    assert [e["data"]["content"] for e in of_type(events, "user/message")] == [text("b")]


# --- late steering, cancel, dispose, terminal stop ----------------------------------------


@pytest.mark.req("INBOX-020")
def test_late_steering_keeps_its_record_as_queued_input(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("a"))
    step_until(agent, "turn-stop")
    assert agent.types()[-1] == "turn/end"
    contexts = [context("S1", meta={"m": 1}), context("S2")]
    agent.call("agent.steer", content=text("late"), contexts=contexts)
    queued_notes = len([n for n in agent.notifications() if n["event"] == "agent/queued"])
    assert agent.step() == "flush"
    assert agent.state()["queued"] == [
        {"content": text("late"), "source": USER, "contexts": contexts}
    ]
    agent.run()
    assert len([n for n in agent.notifications() if n["event"] == "agent/queued"]) == queued_notes
    events = agent.events()
    at = max(i for i, e in enumerate(events) if e["type"] == "user/message")
    assert events[at]["data"] == {"content": text("late"), "source": USER}
    assert same_items(  # any order: the note names none for several contexts (D-196)
        [e["data"] for e in events[at + 1 : at + 3]],
        [
            {"content": text("S1"), "source": plugin("ctx"), "meta": {"m": 1}},
            {"content": text("S2"), "source": plugin("ctx")},
        ],
    )
    assert of_type(events, "steering/message") == []
    assert agent.call("agent.submissions")[-1]["content"] == text("late")


def same_fate(events: object, message: str, contexts: list[str]) -> None:
    """INBOX-021, the note's sentence: cancellation, disposal and terminal discard "drop
    message and contexts together": a record's message reaches the log exactly when each
    of its contexts does.  Which records they drop is the profile's (INBOX-022..024)."""
    seen = repr(events)
    kept = message in seen
    for c in contexts:
        assert (c in seen) == kept, (
            f"{message!r} {'reached' if kept else 'did not reach'} the log, its context {c!r} "
            f"{'did not' if kept else 'did'}"
        )


@pytest.mark.req("INBOX-021", "INBOX-022")
def test_cancel_while_queued_drops_message_and_contexts(impl: Implementation) -> None:
    agent = new_agent(impl)
    contexts = [context("CTX-A1", placement="prompt-prefix"), context("CTX-A2")]
    agent.call("agent.send", content=text("MSG-A"), contexts=contexts)
    agent.call("agent.cancel")
    queued = agent.state()["queued"]
    agent.run()
    events = agent.events()
    with check("INBOX-021", events=events):
        same_fate(events, "MSG-A", ["CTX-A1", "CTX-A2"])
    with check("INBOX-022", queued=queued, events=events, notifications=agent.notifications()):
        assert queued == []
        assert events == []
        assert agent.notifications()[-1] == {
            "event": "agent/cancel-requested",
            "agent": agent.id,
            "cause": {"kind": "user"},
        }
        assert agent.state()["status"] == "idle"
    agent.call("agent.send", content=text("after"))
    agent.run()
    with check("INBOX-022"):
        assert [e["data"]["content"] for e in of_type(agent.events(), "user/message")] == [
            text("after")
        ]


@pytest.mark.req("INBOX-022")
def test_cancel_on_an_idle_empty_agent_changes_nothing(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.cancel")
    assert agent.notifications() == []
    assert agent.events() == []
    agent.call("agent.send", content=text("a"))
    agent.run()
    assert len(of_type(agent.events(), "user/message")) == 1


@pytest.mark.req("INBOX-021", "INBOX-022")
def test_cancel_during_prompt_submit_leaves_no_prompt_event(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.send", content=text("MSG-A"), contexts=[context("CTX-A")])
    assert agent.step() == "claim", "setup: the driver reached the step the test needs"
    agent.call("agent.cancel", cause={"kind": "parent"})
    agent.run()
    events = [(e["type"], e["data"]) for e in agent.events()]
    with check("INBOX-021", events=events):
        same_fate(events, "MSG-A", ["CTX-A"])
    with check("INBOX-022", events=events):
        assert events == [
            ("turn/start", {"turn": 1, "trigger": {"kind": "message", "source": USER}}),
            ("turn/end", {"turn": 1, "reason": {"kind": "aborted"}}),
        ]
        assert agent.state()["status"] == "idle"


@pytest.mark.req("INBOX-021", "INBOX-022")
def test_cancel_during_a_tool_batch_pairs_calls_and_drops_steering(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.script", responses=[{"toolCalls": [{"name": "a"}, {"name": "b"}]}])
    agent.call("agent.send", content=text("go"))
    step_until(agent, "tool")
    agent.call("agent.steer", content=text("MSG-S"), contexts=[context("CTX-S")])
    agent.call("agent.send", content=text("MSG-Q"), contexts=[context("CTX-Q")])
    agent.call("agent.cancel")
    agent.run()
    events = agent.events()
    results = of_type(events, "tool/result")
    with check("INBOX-022", events=events):
        assert len(results) == 2 == len(of_type(events, "tool/call"))
        aborted = results[1]["data"]
        assert aborted.get("isError") is True, "the undispatched call's result is no error"
        error = aborted.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        assert code == "TOOL_ABORTED_BEFORE_DISPATCH", (
            f"the undispatched call's result has error code {code}, not the reference's "
            "TOOL_ABORTED_BEFORE_DISPATCH"
        )
        assert events[-1]["data"] == {"turn": 1, "reason": {"kind": "aborted"}}
        assert events[-2]["type"] == "step/end"
        for dropped in ("MSG-S", "CTX-S", "MSG-Q", "CTX-Q"):
            assert dropped not in repr(events), f"cancel kept {dropped}"
    with check("INBOX-021", events=events):
        same_fate(events, "MSG-S", ["CTX-S"])
        same_fate(events, "MSG-Q", ["CTX-Q"])


@pytest.mark.req("INBOX-021", "INBOX-023")
def test_dispose_ends_the_turn_and_drops_every_record(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.script", responses=[{"toolCalls": [{"name": "a"}, {"name": "b"}]}])
    agent.call("agent.send", content=text("go"))
    step_until(agent, "tool")
    agent.call("agent.steer", content=text("MSG-S"), contexts=[context("CTX-S")])
    agent.call("agent.send", content=text("MSG-Q"), contexts=[context("CTX-Q")])
    agent.call("agent.dispose")
    events = agent.events()
    with check("INBOX-023", events=events):
        assert events[-1]["data"] == {"turn": 1, "reason": {"kind": "disposed"}}
        assert len(of_type(events, "tool/result")) == len(of_type(events, "tool/call")) == 2
        assert agent.state()["status"] == "disposed"
        last = agent.notifications()[-1]
        assert last.get("status") == "disposed", "the last notification reports no disposed status"
        assert agent.call("agent.run")["steps"] == 0
        assert agent.events() == events
        for verb in ("agent.send", "agent.steer", "agent.inject"):
            assert agent.error_code(verb, content=text("x")) == DISPOSED
        for dropped in ("MSG-S", "CTX-S", "MSG-Q", "CTX-Q"):
            assert dropped not in repr(events), f"dispose kept {dropped}"
    with check("INBOX-021", events=events):
        same_fate(events, "MSG-S", ["CTX-S"])
        same_fate(events, "MSG-Q", ["CTX-Q"])


@pytest.mark.req("INBOX-021", "INBOX-024")
def test_terminal_stop_discards_steering_and_keeps_queued_messages(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"event": "turn-stop", "kind": "stop", "once": True})
    agent.call("agent.send", content=text("A"))
    agent.call("agent.send", content=text("B"))
    step_until(agent, "model")
    agent.call("agent.steer", content=text("MSG-STEER"), contexts=[context("CTX-STEER")])
    step_until(agent, "turn-stop")
    agent.call("agent.steer", content=text("MSG-LATE"), contexts=[context("CTX-LATE")])
    agent.run()
    events = agent.events()
    with check("INBOX-021", events=events):
        same_fate(events, "MSG-STEER", ["CTX-STEER"])
        same_fate(events, "MSG-LATE", ["CTX-LATE"])
    users = [e["data"]["content"] for e in of_type(events, "user/message")]
    with check("INBOX-024", events=events):
        assert "MSG-STEER" not in repr(events)
        assert "MSG-LATE" not in repr(events)
        assert users == [text("A"), text("B")]


# --- the core agent only carries contexts -----------------------------------------------


@pytest.mark.req("INBOX-030")
def test_mentions_in_sent_content_are_carried_verbatim(impl: Implementation) -> None:
    agent = new_agent(impl)
    content = text("Use @[Source](dsh-session:InNvdXJjZSI) and dsh-session:ImEi")
    agent.call("agent.send", content=content)
    agent.run()
    assert message_types(agent) == ["user/message", "assistant/message"]
    user = of_type(agent.events(), "user/message")[0]["data"]
    assert user == {"content": content, "source": USER}
    assert agent.requests()[0]["messages"] == [{"role": "user", "content": content}]


@pytest.mark.req("INBOX-031")
def test_a_seeded_agent_continues_turn_numbers(impl: Implementation) -> None:
    donor = new_agent(impl)
    donor.call("agent.send", content=text("one"))
    donor.call("agent.inject", content=text("two"))
    donor.run()
    seed = donor.events()
    agent = new_agent(impl, seed=seed)
    agent.call("agent.send", content=text("three"))
    agent.run()
    events = agent.events()
    assert events[: len(seed)] == seed, "the seed is not the log's prefix"
    starts = [e["data"].get("turn") for e in of_type(events, "turn/start")]
    assert starts == [1, 2, 3], f"turn numbers {starts} do not continue the seed's"
    headers = of_type(events[len(seed) :], "request/header")
    reason = (headers[0].get("data") or {}).get("reason") if headers else None
    assert reason == "resume", f"the first request header after the seed has reason {reason}"


@pytest.mark.req("INBOX-031")
def test_identical_operations_give_identical_results(impl: Implementation) -> None:
    def drive(agent: AgentHandle) -> tuple[Any, ...]:
        agent.call("agent.script", responses=[{"toolCalls": [{"name": "t"}]}, {"text": "ok"}])
        agent.call(
            "agent.send", content=text("a"), contexts=[context("P", placement="prompt-prefix")]
        )
        step_until(agent, "tool")
        agent.call("agent.steer", content=text("s"))
        agent.run()
        requests = [{**r, "sessionId": None} for r in agent.requests()]
        notes = [{**n, "agent": None} for n in agent.notifications()]
        return agent.events(), requests, notes

    assert drive(new_agent(impl)) == drive(new_agent(impl))


@pytest.mark.req("INBOX-032", "INBOX-034")
def test_hosts_pass_prepared_contexts_through_send_or_steer(impl: Implementation) -> None:
    from dsh_conformance.conformance.keyless import CWD, keyless_contexts

    content, contexts = keyless_contexts(impl)
    idle = new_agent(impl, header={"cwd": CWD})
    idle.call("agent.send", content=content, contexts=contexts)  # idle: the queued path
    with check("INBOX-032", state=idle.state()):
        queued = idle.state()["queued"]
        assert queued == [{"content": content, "source": USER, "contexts": contexts}]
        assert idle.notifications()[-1].get("contexts") == contexts
    idle.run()
    expect_equal(  # which turn it opens is the schedule's (D-61)
        "INBOX-034",
        [{k: v for k, v in s.items() if k != "turn"} for s in idle.call("agent.submissions")],
        [{"content": content, "source": USER}],
        what="prompt-submit dispatches",
    )

    busy = new_agent(impl, header={"cwd": CWD})
    busy.call("agent.send", content=text("working"))
    busy.step()
    assert busy.state()["status"] == "running", "setup: the driver reached the step the test needs"
    busy.call("agent.steer", content=content, contexts=contexts)  # running: steering
    with check("INBOX-032", state=busy.state()):
        steering = busy.state()["steering"]
        assert steering == [{"content": content, "source": USER, "contexts": contexts}]
        busy.run()
        assert len(of_type(busy.events(), "steering/message")) == 1
    expect_equal(
        "INBOX-034",
        [s["content"] for s in busy.call("agent.submissions")],
        [text("working")],
        what="prompt-submit dispatches",
    )


@pytest.mark.req("INBOX-035")
@pytest.mark.capability("prepare")
def test_preparation_creates_no_turn(impl: Implementation) -> None:
    from dsh_conformance.conformance.keyless import CWD, prepare_args

    agent = new_agent(impl, header={"cwd": CWD})
    args = prepare_args()
    args["target"] = {"id": agent.id, "cwd": CWD}
    prepared = impl.call("prepare", **args)
    assert prepared["contexts"]
    assert agent.events() == []
    assert agent.notifications() == []
    assert agent.state()["queued"] == []


@pytest.mark.req("PREP-006", "INBOX-035", "INBOX-032")
@pytest.mark.capability("agent.submit")
@pytest.mark.parametrize("verb", ["send", "steer"])
def test_a_late_settlement_after_cancellation_cannot_enqueue(
    impl: Implementation, verb: str
) -> None:
    """Preparation connected to an agent (D-78): a read that settles after the host
    cancelled is observed, and the message is never enqueued; the same flow without the
    cancellation enqueues it (the positive control)."""
    from dsh_conformance.conformance.keyless import CWD, SOURCE_ID, prepare_args

    agent = new_agent(impl, header={"cwd": CWD})
    args = prepare_args()
    args["target"] = {"id": agent.id, "cwd": CWD}
    args["faults"] = {SOURCE_ID: {"kind": "delay", "ms": 9}}
    cancelled = impl.call(
        "agent.submit", agent=agent.id, verb=verb, prepare={**args, "cancelAt": 2}
    )
    pending = agent.state()["queued"] + agent.state()["steering"]
    with check("PREP-006", result=cancelled):
        assert cancelled["enqueued"] is False
        assert cancelled["lateSettled"] == [SOURCE_ID]
        assert pending == []
        assert agent.notifications() == []
    agent.run()
    if not pending:  # a message enqueued anyway is PREP-006's; its turn is not preparation's
        with check("INBOX-035"):
            assert agent.events() == []
    done = impl.call("agent.submit", agent=agent.id, verb=verb, prepare=args)
    with check("INBOX-032", result=done):
        assert done["enqueued"] is True
        (record,) = agent.state()["queued"]
        assert record["contexts"]
        assert record["contexts"][0]["placement"] == "prompt-prefix"
    if not pending:
        expect_equal("INBOX-035", agent.events(), [], what="events before the driver runs")
