"""Direct checks of the reference agent model that the JSON adapter boundary cannot see.

Over the adapter every argument is a fresh JSON copy, so aliasing between caller objects
and accepted records, and Python-only values, are tested here on the model itself
(INBOX-001..003, D-60).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.inbox import accept, snapshot
from dsh_conformance.model.replay import replay_requests
from dsh_conformance.model.session import SessionHeader


def new_agent() -> Agent:
    return Agent(SessionHeader("model-agent", cwd="/w"))


def test_records_do_not_alias_caller_objects() -> None:
    agent = new_agent()
    content: list[Any] = [{"type": "text", "text": "a"}]
    contexts: list[Any] = [
        {"source": {"kind": "plugin", "plugin": "p"}, "content": [{"type": "text", "text": "c"}]}
    ]
    agent.send(content, None, contexts)
    content[0]["text"] = "MUTATED"
    contexts[0]["placement"] = "prompt-prefix"
    contexts.append({"source": {}, "content": []})
    agent.run_until_idle()
    assert "MUTATED" not in repr(agent.log.to_json())
    assert [e.type for e in agent.events].count("context/message") == 1


def test_records_are_deeply_immutable() -> None:
    record = accept([{"type": "text", "text": "a"}], None, [{"meta": {"x": [1]}}])
    assert isinstance(record.content, tuple)
    assert isinstance(record.contexts[0], FrozenDict)
    with pytest.raises(TypeError):
        record.contexts[0]["meta"]["x"] += (2,)  # type: ignore[index]


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, -math.inf, -0.0, 2**53, {1: "x"}, {"a": {1, 2}}, b"x", len, object()],
)
def test_non_lossless_values_are_rejected(value: object) -> None:
    with pytest.raises(DshError) as caught:
        snapshot([value])
    assert caught.value.code == ErrorCode.AGENT_INVALID_MESSAGE


def test_cycles_are_rejected_but_shared_subobjects_are_not() -> None:
    shared = {"k": 1}
    assert snapshot([shared, shared]) == ({"k": 1}, {"k": 1})
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(DshError):
        snapshot(loop)


def test_frozen_values_are_accepted_as_input() -> None:
    frozen = snapshot({"content": [{"type": "text", "text": "a"}]})
    agent = new_agent()
    agent.send(frozen["content"])
    agent.run_until_idle()
    assert agent.events[1].data["content"] == ({"type": "text", "text": "a"},)


def test_model_replay_equals_captured_requests() -> None:
    agent = new_agent()
    agent.script([{"toolCalls": [{"name": "x"}]}, {"text": "ok"}])
    agent.send([{"type": "text", "text": "a"}])
    agent.step()
    agent.steer([{"type": "text", "text": "s"}])
    agent.run_until_idle()
    assert replay_requests(agent.events, agent.id) == agent.requests
    assert len(agent.requests) == 2


def test_a_forked_agent_with_the_same_options_has_the_same_system_prompt() -> None:
    parent = new_agent()
    parent.send([{"type": "text", "text": "a"}])
    parent.run_until_idle()
    child = Agent(
        SessionHeader("child", cwd="/w", parent_session=parent.id, seed_length=len(parent.events)),
        parent.events,
        parent.options,
    )
    assert child.system_prompt() == parent.system_prompt()
    child.send([{"type": "text", "text": "b"}])
    child.run_until_idle()
    header = [e for e in child.events[len(parent.events) :] if e.type == "request/header"]
    assert header[0].data["reason"] == "resume"
    assert child.requests[0]["system"] == parent.requests[0]["system"]


def test_a_replace_appended_between_turns_resets_the_boundary() -> None:
    from dsh_conformance.model.session import Replace

    agent = new_agent()
    agent.send([{"type": "text", "text": "OLD"}])
    agent.run_until_idle()
    surface = agent.log.surface()
    first, last = surface[0].seq, surface[-1].seq
    agent.log.append(
        "user/message",
        {
            "content": [{"type": "text", "text": "SUMMARY"}],
            "source": {"kind": "plugin", "plugin": "compact"},
        },
        surface_op=Replace(first, last),
        source_event_seqs=[n.seq for n in surface],
    )
    agent.send([{"type": "text", "text": "NEW"}])
    agent.run_until_idle()
    messages = agent.requests[-1]["messages"]
    assert [m["content"][0]["text"] for m in messages] == ["SUMMARY", "NEW"]
    assert replay_requests(agent.events, agent.id) == agent.requests
