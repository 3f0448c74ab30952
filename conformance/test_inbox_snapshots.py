"""Snapshots of normalized captured model requests for named scenarios (syrupy, JSON).

Each snapshot (conformance/__snapshots__/test_inbox_snapshots/<test>.json) holds the captured
requests of the scenario plus the message-level log (chunks and step markers left out) so
a reviewer can read what the model saw next to what was logged.  Agent ids are fixed per
scenario and event times are 0, so nothing needs scrubbing.  Refresh with
``pytest conformance/test_inbox_snapshots.py --snapshot-update`` and review the diff.

A snapshot comparison proves identity with reviewed reference output only (REF-009, a
profile requirement); the seed sentences these scenarios illustrate are checked by
test_inbox.py and test_placement.py, and the few property checks kept here blame their own id.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect
from dsh_conformance.conformance.agent_support import AgentHandle, context, text
from dsh_conformance.conformance.js_objects import js_ordered
from dsh_conformance.conformance.keyless import CWD, TARGET_ID, keyless_contexts

pytestmark = pytest.mark.capability("agent")

SHOWN = {
    "turn/start",
    "turn/end",
    "user/message",
    "context/message",
    "steering/message",
    "prompt/blocked",
    "assistant/message",
    "tool/result",
}


class OrderedJSONExtension(JSONSnapshotExtension):
    """syrupy's JSON extension, but in JavaScript's key order (JSON.stringify's order
    matters: insertion order, array-index keys first)."""

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return json.dumps(js_ordered(data), indent=2, ensure_ascii=False) + "\n"


@pytest.fixture
def snap(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(OrderedJSONExtension)


def agent_named(impl: Implementation, name: str, **create: Any) -> AgentHandle:
    """A fixed-id agent; a name already taken in this run gets a numeric suffix."""
    agent_id, n = name, 1
    while impl.error_code("agent.state", agent=agent_id) is None:
        n += 1
        agent_id = f"{name}-{n}"
    impl.call("agent.create", id=agent_id, **create)
    return AgentHandle(impl, agent_id)


def record(agent: AgentHandle) -> dict[str, Any]:
    """What a snapshot holds: requests (session id tokenized) and the message-level log."""
    requests = [{**r, "sessionId": "{{sessionId}}"} for r in agent.requests()]
    log = [
        {"seq": e["seq"], "type": e["type"], "data": e["data"]}
        for e in agent.events()
        if e["type"] in SHOWN
    ]
    return {"requests": requests, "log": log}


def step_until(agent: AgentHandle, name: str) -> None:
    for _ in range(200):
        got = agent.step()
        if got == name:
            return
        assert got is not None
    raise AssertionError(name)


@pytest.mark.req("REF-009", "ENV-065")
def test_keyless_session_reference(impl: Implementation, snap: SnapshotAssertion) -> None:
    """The seed's keyless TUI scenario (V-21): one prefixed user message, no shadowed text."""
    agent = agent_named(impl, TARGET_ID, header={"cwd": CWD})
    agent.call("agent.script", responses=[{"text": "Combined reference request accepted."}])
    content, contexts = keyless_contexts(impl)
    agent.call("agent.send", content=content, contexts=contexts)
    agent.run()
    result = record(agent)
    expect("ENV-065", "SHADOWED OLD" not in repr(result["requests"]), "a shadowed text was sent")
    with check("REF-009"):
        assert result == snap


@pytest.mark.req("REF-009")
def test_steer_during_a_tool_step(impl: Implementation, snap: SnapshotAssertion) -> None:
    agent = agent_named(
        impl, "steer-during-tool", options={"tools": [{"name": "ls", "description": "list"}]}
    )
    agent.call(
        "agent.script",
        responses=[
            {"toolCalls": [{"name": "ls", "arguments": {"path": "."}}], "text": "Listing."},
            {"text": "Steered answer."},
        ],
    )
    agent.call("agent.send", content=text("Look around."), contexts=[context("Separate note.")])
    step_until(agent, "model")
    agent.call(
        "agent.steer",
        content=text("Also compare with the snapshot."),
        contexts=[
            context("PREFIX SNAPSHOT", placement="prompt-prefix", meta={"v": 1}),
            context("Separate steering note.", meta={"n": 1}),
        ],
    )
    agent.run()
    assert record(agent) == snap


@pytest.mark.req("REF-009", "INBOX-011")
def test_blocked_prompt(impl: Implementation, snap: SnapshotAssertion) -> None:
    agent = agent_named(impl, "blocked-prompt")
    agent.call("agent.listen", listener={"kind": "block", "reason": "policy", "once": True})
    agent.call(
        "agent.send",
        content=text("Blocked request."),
        contexts=[context("HIDDEN PREFIX", placement="prompt-prefix"), context("HIDDEN NOTE")],
    )
    agent.call("agent.send", content=text("Allowed request."))
    agent.run()
    result = record(agent)
    expect("INBOX-011", "HIDDEN" not in repr(result), "a blocked prompt's context was written")
    with check("REF-009"):
        assert result == snap


@pytest.mark.req("REF-009")
def test_allow_with_a_rewrite(impl: Implementation, snap: SnapshotAssertion) -> None:
    agent = agent_named(impl, "allow-rewrite")
    agent.call("agent.listen", listener={"kind": "rewrite", "content": text("Rewritten request.")})
    agent.call(
        "agent.send",
        content=text("Original request."),
        contexts=[context("PREFIX SNAPSHOT", placement="prompt-prefix"), context("Separate note.")],
    )
    agent.run()
    assert record(agent) == snap


@pytest.mark.req("REF-009", "INBOX-021", "INBOX-022")
def test_cancellation_while_queued(impl: Implementation, snap: SnapshotAssertion) -> None:
    agent = agent_named(impl, "cancel-queued")
    agent.call(
        "agent.send",
        content=text("Cancelled first."),
        contexts=[context("CANCELLED PREFIX", placement="prompt-prefix")],
    )
    agent.call(
        "agent.send", content=text("Cancelled second."), contexts=[context("CANCELLED NOTE")]
    )
    agent.call("agent.cancel")
    agent.call("agent.send", content=text("Sent after the cancel."))
    agent.run()
    result = record(agent)
    seen = repr(result)
    for message, ctx in (
        ("Cancelled first.", "CANCELLED PREFIX"),
        ("Cancelled second.", "CANCELLED NOTE"),
    ):
        expect(  # the note: a message and its contexts share their fate
            "INBOX-021", (message in seen) == (ctx in seen), "a message and its context parted"
        )
    expect("INBOX-022", "CANCELLED" not in seen, "a cancelled record reached the model")
    with check("REF-009"):
        assert result == snap
