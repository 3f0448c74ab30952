"""ENV-050..ENV-071: the placement split, the prompt envelope and request reconstruction.

The expected prompt event is computed by ``agent_support.expected_prompt_data`` (written from
research note B §2.9, without model code); replay by ``agent_support.replay``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect_equal
from dsh_conformance.conformance.agent_support import (
    DELIM,
    DELIM_TEXT,
    SEED_EVENT_TYPES,
    USER,
    AgentHandle,
    baked_as_the_note_says,
    context,
    expected_prompt_data,
    new_agent,
    of_type,
    plugin,
    prefix_text,
    replay,
    same_items,
    text,
)
from dsh_conformance.profiles import examples

pytestmark = pytest.mark.capability("agent")


def step_until(agent: AgentHandle, name: str) -> None:
    for _ in range(200):
        got = agent.step()
        if got == name:
            return
        assert got is not None, f"quiescent before {name!r}"
    raise AssertionError(name)


def contexts_strategy(prefix: bool = True) -> st.SearchStrategy[list[dict[str, Any]]]:
    """HookContext lists; with ``prefix`` at least one is 'prompt-prefix', else none is."""
    others = [None, "separate", "PROMPT-PREFIX", "prefix", ""]
    placement = st.sampled_from(["prompt-prefix", *others] if prefix else others)
    body = st.sampled_from(["alpha", "## My request:", DELIM_TEXT, "<x>", "\ud800", "😀", ""])
    meta = st.one_of(st.none(), st.sampled_from([{"k": 1}, [1, 2], "m", 0, False]))

    def build(parts: tuple[str | None, str, Any, int]) -> dict[str, Any]:
        where, words, m, n = parts
        out: dict[str, Any] = {"source": plugin(f"p{n}"), "content": text(words) * (n % 3)}
        if where is not None:
            out["placement"] = where
        if m is not None:
            out["meta"] = m
        return out

    item = st.tuples(placement, body, meta, st.integers(0, 5)).map(build)
    contexts = st.lists(item, max_size=4)
    if prefix:
        return contexts.filter(lambda cs: any(c.get("placement") == "prompt-prefix" for c in cs))
    return contexts


def placed_after(events: list[dict[str, Any]], index: int, count: int) -> list[dict[str, Any]]:
    return [e["data"] for e in events[index + 1 : index + 1 + count]]


def sent_prompt(
    impl: Implementation, contexts: list[dict[str, Any]], prompt: str
) -> tuple[AgentHandle, int, dict[str, Any], list[dict[str, Any]]]:
    """Send and run; returns the agent, the user/message index and the expected split."""
    agent = new_agent(impl)
    agent.call("agent.send", content=text(prompt), contexts=contexts)
    agent.run()
    events = agent.events()
    users = [i for i, e in enumerate(events) if e["type"] == "user/message"]
    assert len(users) == 1
    expected, separate = expected_prompt_data(text(prompt), USER, contexts)
    return agent, users[0], expected, separate


PROMPTS = st.sampled_from(["hi", "", "## My request:", "x\ud800"])


@pytest.mark.req("ENV-054", "ENV-056")
@settings(max_examples=examples(40))
@given(contexts=contexts_strategy(prefix=False), prompt=PROMPTS)
def test_without_prefix_contexts_every_context_follows_the_prompt(
    impl: Implementation, contexts: list[dict[str, Any]], prompt: str
) -> None:
    agent, at, expected, separate = sent_prompt(impl, contexts, prompt)
    events = agent.events()
    with check("ENV-054", prompt_event=events[at]["data"]):
        assert events[at]["data"] == {"content": text(prompt), "source": USER}
        assert expected == events[at]["data"]
    with check("ENV-056", events=events[at:]):
        assert placed_after(events, at, len(separate)) == separate
        assert len(of_type(events, "context/message")) == len(contexts)
        assert events[at + 1 + len(separate)]["type"] == "step/start"
        request = agent.requests()[0]
        assert request["messages"] == [
            {"role": "user", "content": text(prompt)},
            *({"role": "user", "content": s["content"]} for s in separate),
        ]


def without_source(data: dict[str, Any]) -> dict[str, Any]:
    """Prompt event data but its source: the layout ENV-053 pins (the source is ENV-064's)."""
    return {k: v for k, v in data.items() if k != "source"}


def envelope_entry(c: dict[str, Any]) -> dict[str, Any]:
    """The envelope's record of one prefix context: its source and meta (ENV-051)."""
    return {k: c[k] for k in ("source", "meta") if k in c}


@pytest.mark.req("ENV-050", "ENV-051", "ENV-053", "ENV-055", "ENV-057", "ENV-059")
@settings(max_examples=examples(60))
@given(contexts=contexts_strategy(prefix=True), prompt=PROMPTS)
def test_prefix_contexts_are_baked_into_the_prompt_event(
    impl: Implementation, contexts: list[dict[str, Any]], prompt: str
) -> None:
    agent, at, expected, separate = sent_prompt(impl, contexts, prompt)
    events = agent.events()
    data = events[at]["data"]
    prefix = [c for c in contexts if c.get("placement") == "prompt-prefix"]
    # The seed's sentences first, judged by what the model reads (D-195, D-196) ...
    with check("ENV-050", content=data["content"]):
        assert baked_as_the_note_says(data["content"], prefix, text(prompt))
    with check("ENV-051", envelope=data.get("envelope")):
        assert data["envelope"]["displayContent"] == text(prompt)
        entries = data["envelope"]["prefixContexts"]
        assert same_items(entries, [envelope_entry(c) for c in prefix])
    with check("ENV-055", events=events[at:]):
        assert data["source"] == USER
        written = [e["data"] for e in events[at + 1 : at + 1 + len(separate)]]
        assert same_items(written, separate)
    with check("ENV-059"):
        assert len(of_type(events, "context/message")) == len(separate)
        assert len(separate) == len(contexts) - len(prefix)
        request = agent.requests()[0]
        assert request["messages"][0] == {"role": "user", "content": data["content"]}
        assert same_items(
            request["messages"][1:], [{"role": "user", "content": s["content"]} for s in separate]
        )
    # ... then the reference profile's layout and order.
    blocks = sum(len(c["content"]) for c in prefix)
    with check("ENV-053", content=data["content"]):
        assert data["content"][blocks] == DELIM
        assert DELIM not in data["content"][blocks + 1 :]
        assert without_source(data) == without_source(expected)
    with check("ENV-057"):
        assert placed_after(events, at, len(separate)) == separate


@pytest.mark.req("ENV-050", "ENV-051")
@pytest.mark.parametrize("content", [[], text("")], ids=["no-blocks", "empty-text"])
def test_an_empty_prompt_with_prefix_contexts_is_still_baked(
    impl: Implementation, content: list[dict[str, Any]]
) -> None:
    """Edge shape (issue 25): an empty effective prompt still gets the snapshot and the
    delimiter, and the envelope keeps the empty display content."""
    first = context("FIRST", placement="prompt-prefix")
    last = context("", placement="prompt-prefix", meta={"last": True})
    agent = new_agent(impl)
    agent.call("agent.send", content=content, contexts=[first, last])
    agent.run()
    (user,) = of_type(agent.events(), "user/message")
    data = user["data"]
    with check("ENV-050", data=data):
        assert baked_as_the_note_says(data["content"], [first, last], content)
    with check("ENV-051", envelope=data.get("envelope")):
        assert data["envelope"]["displayContent"] == content


@pytest.mark.req("ENV-060", "ENV-050", "ENV-053", "ENV-057", "ENV-090")
@settings(max_examples=examples(40))
@given(contexts=st.one_of(contexts_strategy(prefix=True), contexts_strategy(prefix=False)))
def test_drained_steering_gets_the_same_split(
    impl: Implementation, contexts: list[dict[str, Any]]
) -> None:
    agent = new_agent(impl)
    agent.call("agent.script", responses=[{"toolCalls": [{"name": "t"}]}])
    agent.call("agent.send", content=text("go"))
    step_until(agent, "model")
    agent.call("agent.steer", content=text("steer"), contexts=contexts)
    agent.run()
    events = agent.events()
    expected, separate = expected_prompt_data(text("steer"), USER, contexts)
    prefix = [c for c in contexts if c.get("placement") == "prompt-prefix"]
    steering = [i for i, e in enumerate(events) if e["type"] == "steering/message"]
    with check("ENV-050", events=events):
        assert len(steering) == 1
    data = events[steering[0]]["data"]
    with check("ENV-060", steering=data):
        assert data["source"] == USER
        if prefix:
            assert baked_as_the_note_says(data["content"], prefix, text("steer"))
            assert data["envelope"]["displayContent"] == text("steer")
        else:
            assert data["content"] == text("steer")
        written = [e["data"] for e in events[steering[0] + 1 : steering[0] + 1 + len(separate)]]
        assert same_items(written, separate)
        assert [s["content"] for s in agent.call("agent.submissions")] == [text("go")]
    # Which turn the steering lands in is the micro-step schedule's (D-61): ENV-090.
    expect_equal("ENV-090", data.get("turn"), 1, what="turn of the drained steering")
    with check("ENV-053", steering=data):
        assert without_source(data) == without_source({"turn": 1, **expected})
    with check("ENV-057"):
        assert placed_after(events, steering[0], len(separate)) == separate


@pytest.mark.req("ENV-060", "ENV-053", "ENV-090")
def test_steer_during_a_tool_step_with_prefix_and_separate_contexts(impl: Implementation) -> None:
    """Research note B §2.12(d), restated."""
    agent = new_agent(impl)
    agent.call("agent.script", responses=[{"toolCalls": [{"name": "t"}]}])
    agent.call("agent.send", content=text("go"))
    step_until(agent, "model")
    p = context("PREFIX", placement="prompt-prefix")
    s1 = context("S1", meta={"m": 1})
    s2 = context("S2")
    agent.call("agent.steer", content=text("x"), contexts=[p, s1, s2])
    assert agent.step() == "tool", "setup: the tool step runs"
    # When drained steering reaches the log is the reference's micro-step schedule (D-61):
    # right after the tool batch, seen by the next request (ENV-090), judged after the
    # note's sentence (ENV-060), the split, wherever the host drains it.
    after_the_tool = [e["type"] for e in agent.events()[-4:]]
    agent.run()
    events = agent.events()
    at = [i for i, e in enumerate(events) if e["type"] == "steering/message"]
    assert len(at) == 1, "setup: the steering is drained into the turn"
    steering = events[at[0]]["data"]
    separate = [
        {"content": text("S1"), "source": plugin("ctx"), "meta": {"m": 1}},
        {"content": text("S2"), "source": plugin("ctx")},
    ]
    with check("ENV-060", events=events[at[0] : at[0] + 3]):
        assert baked_as_the_note_says(steering["content"], [p], text("x"))
        assert steering["envelope"]["displayContent"] == text("x")
        assert [e["type"] for e in events[at[0] + 1 : at[0] + 3]] == ["context/message"] * 2
        # in either order: the note names none for several contexts (D-196)
        assert same_items([e["data"] for e in events[at[0] + 1 : at[0] + 3]], separate)
    requests = agent.requests()
    head = {"role": "user", "content": steering["content"]}
    tail = [{"role": "user", "content": c["content"]} for c in separate]
    with check("ENV-060", requests=requests):
        assert any(
            r["messages"][i] == head and same_items(r["messages"][i + 1 : i + 3], tail)
            for r in requests
            for i in range(len(r["messages"]))
        ), "no request sees the steering followed by its separate contexts"
    expect_equal(
        "ENV-090",
        after_the_tool,
        ["tool/result", "steering/message", "context/message", "context/message"],
        what="the log after the tool step",
    )
    expect_equal("ENV-090", requests[1]["messages"][-3:], [head, *tail], what="the 2nd request")
    with check("ENV-053", steering=steering):
        assert without_source(steering) == {
            "turn": 1,
            "content": [*text("PREFIX"), DELIM, *text("x")],
            "envelope": {
                "displayContent": text("x"),
                "prefixContexts": [{"source": plugin("ctx")}],
            },
        }


@pytest.mark.req("ENV-061", "ENV-064")
def test_prompt_submit_sees_only_the_direct_prompt(impl: Implementation) -> None:
    agent = new_agent(impl)
    snapshot = context("SNAPSHOT BYTES", placement="prompt-prefix", meta={"r": 1})
    agent.call("agent.send", content=text("direct"), source=plugin("host"), contexts=[snapshot])
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("EFFECTIVE")})
    agent.run()
    submissions = agent.call("agent.submissions")
    user = of_type(agent.events(), "user/message")[0]["data"]
    with check("ENV-061", submissions=submissions):  # turn numbers are the schedule's
        assert [{k: v for k, v in s.items() if k != "turn"} for s in submissions] == [
            {"content": text("direct"), "source": plugin("host")}
        ]
        assert text("direct")[0] not in user["content"]
    expect_equal("ENV-064", user["source"], plugin("host"), what="prompt source")


@pytest.mark.req("ENV-062", "ENV-053")
def test_a_rewrite_applies_to_model_content_and_display_content(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("EFFECTIVE")})
    snapshot = context("SNAPSHOT BYTES", placement="prompt-prefix", meta={"r": 1})
    agent.call("agent.send", content=text("direct"), source=plugin("host"), contexts=[snapshot])
    agent.run()
    data = of_type(agent.events(), "user/message")[0]["data"]
    with check("ENV-062", data=data):
        assert baked_as_the_note_says(data["content"], [snapshot], text("EFFECTIVE"))
        assert data["envelope"]["displayContent"] == text("EFFECTIVE")
        assert agent.requests()[0]["messages"] == [{"role": "user", "content": data["content"]}]
    with check("ENV-053", data=data):
        assert without_source(data) == {
            "content": [*text("SNAPSHOT BYTES"), DELIM, *text("EFFECTIVE")],
            "envelope": {
                "displayContent": text("EFFECTIVE"),
                "prefixContexts": [{"source": plugin("ctx"), "meta": {"r": 1}}],
            },
        }


@pytest.mark.req("ENV-064")
def test_the_turn_trigger_and_prompt_keep_the_record_source(impl: Implementation) -> None:
    agent = new_agent(impl)
    agent.call("agent.listen", listener={"kind": "allow", "content": text("X")})
    agent.call("agent.send", content=text("a"), source=plugin("origin"))
    agent.run()
    assert of_type(agent.events(), "user/message")[0]["data"]["source"] == plugin("origin")


@pytest.mark.req("ENV-051", "ENV-070")
def test_the_envelope_and_sources_never_reach_the_model(impl: Implementation) -> None:
    agent = new_agent(impl)
    p = context("P", placement="prompt-prefix", meta={"secret": "META-ONLY"})
    agent.call("agent.send", content=text("a"), source=plugin("SRC-ONLY"), contexts=[p])
    agent.call("agent.inject", content=text("i"), source=plugin("SRC-ONLY"), meta="META-ONLY")
    agent.run()
    for request in agent.requests():
        with check("ENV-051", request=request):
            assert "META-ONLY" not in repr(request)
            assert "SRC-ONLY" not in repr(request)
            assert "displayContent" not in repr(request)
        with check("ENV-070", request=request):
            assert list(request) == ["provider", "model", "messages", "system", "sessionId"]
            for message in request["messages"]:
                assert set(message) <= {"role", "content", "provenance"}


@pytest.mark.req("ENV-058")
def test_every_request_replays_from_the_log(impl: Implementation) -> None:
    agent = new_agent(impl, options={"tools": [{"name": "t", "description": "d"}]})
    agent.call(
        "agent.script",
        responses=[{"toolCalls": [{"name": "t"}, {"name": "u"}], "text": "calling"}, {"text": "a"}],
    )
    agent.call(
        "agent.send", content=text("one"), contexts=[context("P", placement="prompt-prefix")]
    )
    step_until(agent, "tool")
    agent.call("agent.inject", content=text("deferred"))
    agent.call("agent.steer", content=text("st"), contexts=[context("SEP")])
    agent.run()
    agent.call("agent.inject", content=text("idle"))
    agent.call("agent.send", content=text("two"))
    agent.run()
    events = agent.events()
    assert {e["type"] for e in events} <= SEED_EVENT_TYPES
    requests = agent.requests()
    assert len(requests) == len(of_type(events, "step/start")) == 3
    assert replay(events, agent.id) == requests


@pytest.mark.req("ENV-052")
def test_a_prefixed_prompt_replays_without_a_new_event_or_a_context_message(
    impl: Implementation,
) -> None:
    agent = new_agent(impl)
    p = context("SNAP", placement="prompt-prefix", meta={"kind": "session-reference"})
    agent.call("agent.send", content=text("this session?"), contexts=[p])
    agent.run()
    events = agent.events()
    assert {e["type"] for e in events} <= SEED_EVENT_TYPES
    assert of_type(events, "context/message") == []
    assert replay(events, agent.id) == agent.requests()
    (message,) = agent.requests()[0]["messages"]
    assert message["role"] == "user"
    assert baked_as_the_note_says(message["content"], [p], text("this session?"))


@pytest.mark.req("ENV-071")
def test_the_system_prompt_is_deterministic_and_logged(impl: Implementation) -> None:
    options = {
        "persona": "Be brief.",
        "sections": [{"text": "cwd={{cwd}} model={{model}}", "order": 5}],
    }
    a = new_agent(impl, header={"cwd": "/w"}, options=options)
    b = new_agent(impl, header={"cwd": "/w"}, options=options)
    c = new_agent(impl, header={"cwd": "/other"}, options=options)
    system = a.call("agent.system")["system"]
    assert system == (
        "You are an AI agent powered by the DeepSeek Harness SDK.\n\nBe brief.\n\n"
        "cwd=/w model=scripted"
    )
    assert b.call("agent.system")["system"] == system
    assert c.call("agent.system")["system"] != system
    a.call("agent.send", content=text("1"))
    a.call("agent.send", content=text("2"))
    a.run()
    headers = of_type(a.events(), "request/header")
    assert [h["data"] for h in headers] == [
        {
            "header": {"config": {"provider": "mock", "model": "scripted"}, "system": system},
            "reason": "initial",
        }
    ]
    assert [r["system"] for r in a.requests()] == [system, system]


@pytest.mark.req("ENV-065", "ENV-059", "ENV-052")
def test_a_prepared_reference_reaches_the_model_as_one_prefixed_user_message(
    impl: Implementation,
) -> None:
    """V-21 restated as assertions (the request itself is snapshotted elsewhere)."""
    from dsh_conformance.conformance.keyless import READABLE, keyless_contexts

    agent = new_agent(impl, header={"cwd": "/workspace/project"})
    content, contexts = keyless_contexts(impl)
    agent.call("agent.send", content=content, contexts=contexts)
    agent.run()
    last = agent.requests()[0]["messages"][-1]
    body = repr(agent.requests())
    with check("ENV-065", message=last):
        assert last["role"] == "user"
        snapshot_text = prefix_text(last["content"], text(READABLE))
        assert snapshot_text is not None, "not snapshot, delimiter, prompt"
        assert "Retained checkpoint." in snapshot_text
        assert "Recent retained question." in snapshot_text
        assert "SHADOWED OLD USER" not in body
        assert "SHADOWED OLD ASSISTANT" not in body
    expect_equal("ENV-059", of_type(agent.events(), "context/message"), [], what="contexts")
    envelope = of_type(agent.events(), "user/message")[0]["data"]["envelope"]
    with check("ENV-052", envelope=envelope):
        assert envelope["displayContent"] == content
        (prefix,) = envelope["prefixContexts"]
        assert prefix["source"] == plugin("session-reference")
        assert prefix["meta"]["references"][0]["sessionId"] == "source-session"
        assert prefix["meta"]["references"][0]["compacted"] is True


@pytest.mark.req("ENV-065")
@pytest.mark.capability("mention")
@pytest.mark.capability("prepare")
def test_the_host_flow_parses_prepares_and_sends_the_readable_prompt(
    impl: Implementation,
) -> None:
    """V-21 composed by the implementation alone: mention parse -> prepare -> send.

    The model and the logged display content carry the readable prompt (``@label``), never
    the raw Markdown mention; the snapshot comes first and names the mentioned session.
    """
    from dsh_conformance.conformance.keyless import PROMPT, READABLE, prepare_args

    parsed = impl.call("mention.parse", text=PROMPT)
    prepared = impl.call("prepare", **prepare_args(parsed["text"], parsed["references"]))
    agent = new_agent(impl, header={"cwd": "/workspace/project"})
    agent.call("agent.send", content=prepared["content"], contexts=prepared["contexts"])
    agent.run()
    last = agent.requests()[0]["messages"][-1]
    with check("ENV-065", message=last):
        snapshot_text = prefix_text(last["content"], text(READABLE))
        assert snapshot_text is not None, "not snapshot, delimiter, prompt"
        assert "Recent retained question." in snapshot_text
    # the logged display content, where the host keeps an envelope (one without prefix
    # contexts, as a host placing them apart, has none to read)
    envelope = of_type(agent.events(), "user/message")[0]["data"].get("envelope")
    if isinstance(envelope, dict):
        with check("ENV-065", envelope=envelope):
            assert envelope.get("displayContent") == text(READABLE)
            assert "dsh-session:" not in repr(envelope.get("displayContent"))


@pytest.mark.req("ENV-058")
def test_a_compacted_seed_replays_its_current_surface(impl: Implementation) -> None:
    """V-20: a target whose own history was compacted asks the model for its current surface."""
    from dsh_conformance.conformance.keyless import source_session

    seed = source_session()["events"]
    agent = new_agent(impl, seed=seed)
    agent.call("agent.send", content=text("And now?"))
    agent.run()
    (request,) = agent.requests()
    assert "SHADOWED OLD" not in repr(request)
    assert [m["content"][0]["text"] for m in request["messages"]] == [
        "<compacted-summary>Retained checkpoint.</compacted-summary>",
        "Recent retained question.",
        "And now?",
    ]
    assert replay(agent.events(), agent.id) == [request]
    assert of_type(agent.events(), "turn/start")[-1]["data"]["turn"] == 2


@pytest.mark.req("ENV-072", "ENV-073")
@pytest.mark.capability("agent.display")
def test_a_host_shows_display_content_sources_and_an_isolated_title(impl: Implementation) -> None:
    """V-20 compact TUI replay and V-18 title isolation, through the host view (D-77).

    The keyless prompt is shown as its readable display content with one source entry for
    the referenced session; no text of the snapshot (its data region or warning) appears
    in the view, and the title is read from the display content.
    """
    from dsh_conformance.conformance.keyless import SOURCE_ID, keyless_contexts

    agent = new_agent(impl, header={"cwd": "/workspace/project"})
    content, contexts = keyless_contexts(impl)
    agent.call("agent.script", responses=[{"text": "Answer."}])
    agent.call("agent.send", content=content, contexts=contexts)
    agent.run()
    view = agent.call("agent.display")
    users = [m for m in view["messages"] if m["role"] == "user"]
    snapshot_texts = ("Retained checkpoint.", "Recent retained question.", "referenced-sessions")
    with check("ENV-072", view=view):  # the display content: what the user typed (sent)
        assert len(users) == 1
        assert users[0]["content"] == content
        assert [s["sessionId"] for s in users[0]["sources"]] == [SOURCE_ID]
        assert not any(t in repr(view["messages"]) for t in snapshot_texts)
    with check("ENV-073", title=view["title"]):
        assert not any(t in str(view["title"]) for t in snapshot_texts)
        shown = "".join(b["text"] for b in content if b["type"] == "text")
        assert view["title"] == shown.strip().split("\n", 1)[0].strip()[:80]
