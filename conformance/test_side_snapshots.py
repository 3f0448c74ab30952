"""SIDE-*: snapshots of normalized captured requests (syrupy JSON), reviewed by reading.

Seed 004: "snapshot coverage lands with the first bound UI".  Until then these pin the
client-independent request bytes a bound UI will rest on: the child's first request after
framing, and the parent's next request after a merge-back (idle, mid-turn tool batch,
compacted source).  Normalization (research note B §6.2): session ids become
``{{parent}}``/``{{child}}``, the system prompt and tool schemas become ``{{system}}``/
``{{tools}}`` after checking they equal the parent's byte for byte (SIDE-008); nothing else
is touched, so message order and content are compared exactly.

A snapshot comparison proves identity with reviewed reference output (REF-009, profile):
the framing and handback texts in them are this project's wording.  The seed sentences are
checked in test_side.py; only the system/tools identity checked while normalizing blames a
seed id here.
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect

pytestmark = [pytest.mark.capability("side"), pytest.mark.capability("agent")]

OPTIONS: dict[str, Any] = {
    "persona": "You help with the repository at {{cwd}}.",
    "tools": [
        {"name": "read_file", "result": [{"type": "text", "text": "def main(): ..."}]},
        {"name": "write_file"},
    ],
}


@pytest.fixture
def fresh_impl(impl: Implementation) -> Implementation:
    impl.call("reset")
    return impl


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def turn(impl: Implementation, aid: str, prompt: str, responses: list[dict[str, Any]]) -> None:
    impl.call("agent.script", agent=aid, responses=responses)
    impl.call("agent.send", agent=aid, content=text(prompt))
    impl.call("agent.run", agent=aid)


def normalize(impl: Implementation, request: dict[str, Any]) -> dict[str, Any]:
    """Scrub ids; replace system/tools by placeholders once they match the parent's."""
    parent = impl.call("agent.requests", agent="main")[0]
    expect("SIDE-008", request["system"] == parent["system"], "system prompt differs")
    expect("SIDE-064", request["tools"] == parent["tools"], "tools differ from the parent's")
    names = {"main": "{{parent}}", "main/side": "{{child}}"}
    out = dict(request)
    out["system"] = "{{system}}"
    out["tools"] = "{{tools}}"
    out["sessionId"] = names[request["sessionId"]]
    return out


def setup_parent(impl: Implementation) -> None:
    impl.call("reset")
    impl.call("agent.create", id="main", header={"cwd": "/workspace/app"}, options=OPTIONS)
    turn(
        impl,
        "main",
        "Why does main() crash on empty input?",
        [
            {"toolCalls": [{"name": "read_file", "id": "read-1", "arguments": {"path": "app.py"}}]},
            {"text": "main() indexes argv[1] without checking its length."},
        ],
    )
    turn(impl, "main", "Fix it.", [{"text": "I will add a length check next."}])


@pytest.mark.req("REF-009", "SIDE-008", "SIDE-064", "SIDE-027")
def test_child_first_request_after_framing(
    fresh_impl: Implementation, snapshot_json: SnapshotAssertion
) -> None:
    impl = fresh_impl
    setup_parent(impl)
    impl.call("side.fork", parent="main", child="main/side")
    turn(
        impl,
        "main/side",
        "Is a length check enough, or should we use argparse?",
        [{"text": "Use argparse."}],
    )
    request = impl.call("agent.requests", agent="main/side")[0]
    normalized = normalize(impl, request)
    with check("REF-009"):
        assert normalized == snapshot_json


@pytest.mark.req("REF-009", "SIDE-008", "SIDE-064", "SIDE-027")
def test_parent_next_request_after_merge_back(
    fresh_impl: Implementation, snapshot_json: SnapshotAssertion
) -> None:
    impl = fresh_impl
    setup_parent(impl)
    impl.call("side.fork", parent="main", child="main/side")
    turn(impl, "main/side", "Is a length check enough?", [{"text": "argparse is clearer."}])
    impl.call(
        "agent.script",
        agent="main/side",
        responses=[
            {
                "text": "Prefer argparse over a manual argv length check: "
                "it also gives --help and usage errors."
            }
        ],
    )
    impl.call("side.askHandback", child="main/side", cap=512)
    impl.call("agent.run", agent="main/side")
    merge = impl.call("side.mergeBack", parent="main", child="main/side", cap=512)
    turn(impl, "main", "Go ahead.", [{"text": "Switching to argparse."}])
    request = impl.call("agent.requests", agent="main")[-1]
    handback_ask = impl.call("agent.requests", agent="main/side")[-1]["messages"][-1]
    with check("REF-009"):
        assert {
            "merge": merge,
            "handbackRequest": handback_ask,
            "parentNextRequest": normalize(impl, request),
        } == snapshot_json


@pytest.mark.req("REF-009", "SIDE-008", "SIDE-064", "SIDE-027")
def test_parent_request_after_a_merge_deferred_behind_a_tool_batch(
    fresh_impl: Implementation, snapshot_json: SnapshotAssertion
) -> None:
    impl = fresh_impl
    setup_parent(impl)
    impl.call("side.fork", parent="main", child="main/side")
    impl.call(
        "side.mergeBack", parent="main", child="main/side", cap=256, text="Check Windows paths too."
    )
    impl.call(
        "agent.script",
        agent="main",
        responses=[
            {
                "toolCalls": [
                    {"name": "write_file", "id": "write-1", "arguments": {"path": "app.py"}}
                ]
            },
            {"text": "Done; I also handled Windows paths."},
        ],
    )
    impl.call("agent.send", agent="main", content=text("Apply the fix."))
    while impl.call("agent.state", agent="main")["toolBatch"] is False:
        impl.call("agent.step", agent="main")
    merge = impl.call(
        "side.mergeBack", parent="main", child="main/side", cap=256, text="Keep the exit code 2."
    )
    impl.call("agent.run", agent="main")
    requests = impl.call("agent.requests", agent="main")
    with check("REF-009"):
        assert {
            "merge": merge,
            "requestAfterBatch": normalize(impl, requests[-1]),
        } == snapshot_json


@pytest.mark.req("REF-009", "SIDE-008", "SIDE-064", "SIDE-027")
def test_child_first_request_from_a_compacted_parent(
    fresh_impl: Implementation, snapshot_json: SnapshotAssertion
) -> None:
    impl = fresh_impl
    setup_parent(impl)
    impl.call("side.compact", agent="main", summary="main() crashed on empty argv; fix planned.")
    turn(impl, "main", "Also log the error.", [{"text": "Will log to stderr."}])
    fork = impl.call("side.fork", parent="main", child="main/side")
    turn(impl, "main/side", "What did the summary drop?", [{"text": "The tool output."}])
    request = impl.call("agent.requests", agent="main/side")[0]
    normalized = normalize(impl, request)
    with check("REF-009"):
        assert {"fork": fork, "childFirstRequest": normalized} == snapshot_json
