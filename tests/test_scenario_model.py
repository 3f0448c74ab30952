"""The reference ``scenario.run``: results match the published schema, bad scripts are
rejected before anything runs with a typed error naming the offending item, and a held
reply gives the stepped agent an in-flight window (``model`` then ``stream``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter

sys.path.insert(0, str(Path(__file__).parent))
from test_op_schemas import op_files, published_ops, registry

SCHEMA = op_files()["scenario.json"]

TOOLS = {"tools": [{"name": "lookup", "result": [{"type": "text", "text": "42"}]}]}
PREFIX = {
    "source": {"kind": "plugin", "plugin": "p"},
    "content": [{"type": "text", "text": "ctx"}],
    "placement": "prompt-prefix",
}
EXAMPLE: dict[str, Any] = {
    "agent": {"id": "target", "options": TOOLS},
    "listeners": [{"kind": "rewrite", "content": [{"type": "text", "text": "e"}], "submission": 2}],
    "replies": [{"toolCalls": [{"id": "c1", "name": "lookup"}]}, {"text": "done"}, {"hang": True}],
    "steps": [
        {"on": "start", "do": "send", "text": "hello", "contexts": [PREFIX]},
        {"on": {"toolCall": "c1"}, "do": "steer", "text": "also this"},
        {"on": {"turnEnd": 1}, "do": "steer", "text": "late"},
        {"on": {"request": 3}, "do": "cancel"},
        {"on": {"idle": 1}, "do": "dispose"},
        {"on": {"idle": 2}, "do": "send", "text": "too late"},
    ],
}


def run(script: dict[str, Any]) -> Any:
    return ReferenceAdapter().call("scenario.run", script)


def validate(schema: dict[str, Any], value: object) -> None:
    base, _ = published_ops()["scenario.run"]
    whole = {"$id": base, "$defs": SCHEMA["$defs"], **schema}
    jsonschema.Draft202012Validator(whole, registry=registry()).validate(value)


def test_the_documented_example_runs_and_validates() -> None:
    _, spec = published_ops()["scenario.run"]
    validate(spec["args"], EXAMPLE)
    result = run(EXAMPLE)
    validate(spec["result"], result)
    types = [e["type"] for e in result["log"]["events"]]
    # the late steer (turn 1's end) became turn 2's message, rewritten by submission 2;
    # request 3 hung until the cancel, so turn 2 ended aborted without an assistant message
    assert types.count("turn/end") == 2
    assert result["log"]["events"][-1]["data"]["reason"] == {"kind": "aborted"}
    assert result["submissions"][1]["content"] == [{"type": "text", "text": "late"}]
    assert [s["fired"] for s in result["steps"]] == [True] * 6
    assert result["steps"][5]["error"]["code"] == "DSH_AGENT_DISPOSED"
    assert result["status"] == "disposed"
    assert len(result["requests"]) == 3


def test_a_run_is_deterministic() -> None:
    assert run(EXAMPLE) == run(json.loads(json.dumps(EXAMPLE)))


def test_a_trigger_that_does_not_come_is_reported_unfired() -> None:
    script = {
        "agent": {"id": "a"},
        "replies": [{"hang": True}, {"text": "never"}],
        "steps": [
            {"do": "send", "text": "x"},
            {"on": {"request": 1}, "do": "cancel"},
            {"on": {"request": 2}, "do": "steer", "text": "y"},
        ],
    }
    assert run(script)["steps"][2] == {"fired": False}


A = {"id": "a"}
BAD = [
    ({"agent": A, "steps": [{"do": "jump"}]}, "DSH_SCENARIO_INVALID", "/steps/0/do"),
    ({"agent": A, "steps": [{"do": "send"}]}, "DSH_SCENARIO_INVALID", "/steps/0"),
    (
        {"agent": A, "steps": [{"do": "inject", "text": "x", "contexts": []}]},
        "DSH_SCENARIO_INVALID",
        "/steps/0/contexts",
    ),
    (
        {"agent": A, "steps": [{"on": {"later": 1}, "do": "cancel"}]},
        "DSH_SCENARIO_INVALID",
        "/steps/0/on",
    ),
    (
        {"agent": A, "listeners": [{"kind": "rewrite"}], "steps": []},
        "DSH_SCENARIO_INVALID",
        "/listeners/0",
    ),
    (
        {
            "agent": {"id": "a", "options": TOOLS},
            "replies": [
                {"toolCalls": [{"id": "c", "name": "lookup"}, {"id": "c", "name": "lookup"}]}
            ],
            "steps": [],
        },
        "DSH_SCENARIO_INVALID",
        "/replies/0/toolCalls/1/id",
    ),
    (
        {
            "agent": A,
            "steps": [{"do": "send", "text": "x"}, {"on": {"request": 1}, "do": "cancel"}],
        },
        "DSH_SCENARIO_UNREACHABLE",
        "/steps/1/on",
    ),
    (
        {"agent": A, "steps": [{"on": {"toolCall": "zz"}, "do": "cancel"}]},
        "DSH_SCENARIO_UNREACHABLE",
        "/steps/0/on",
    ),
    (
        {
            "agent": A,
            "steps": [{"do": "send", "text": "x"}, {"on": {"turnEnd": 2}, "do": "cancel"}],
        },
        "DSH_SCENARIO_UNREACHABLE",
        "/steps/1/on",
    ),
    (
        {"agent": A, "steps": [{"on": {"submit": 1}, "do": "cancel"}]},
        "DSH_SCENARIO_UNREACHABLE",
        "/steps/0/on",
    ),
    (
        {"agent": A, "replies": [{"hang": True}], "steps": [{"do": "send", "text": "x"}]},
        "DSH_SCENARIO_UNREACHABLE",
        "/replies/0",
    ),
    (
        {"agent": A, "replies": [{"toolCalls": [{"id": "c", "name": "nope"}]}], "steps": []},
        "DSH_SCENARIO_UNKNOWN_TOOL",
        "/replies/0/toolCalls/0/name",
    ),
]


@pytest.mark.parametrize(("script", "code", "pointer"), BAD)
def test_a_bad_script_is_rejected_naming_the_offending_item(
    script: dict[str, Any], code: str, pointer: str
) -> None:
    with pytest.raises(ImplementationError) as caught:
        run(script)
    assert caught.value.code == code
    assert caught.value.message.startswith(f"{pointer}: "), caught.value.message


def test_a_bad_script_runs_nothing() -> None:
    """The bad step comes after a valid send: the whole script is checked first."""
    adapter = ReferenceAdapter()
    adapter.call("agent.create", {"id": "a"})
    script = {"agent": {"id": "a"}, "steps": [{"do": "send", "text": "x"}, {"do": "jump"}]}
    with pytest.raises(ImplementationError):
        adapter.call("scenario.run", script)
    assert adapter.call("agent.log", {"agent": "a"})["events"] == []


def test_a_held_reply_splits_the_model_call() -> None:
    adapter = ReferenceAdapter()
    adapter.call("agent.create", {"id": "h", "options": {"fallback": None}})
    adapter.call("agent.script", {"agent": "h", "responses": [{"text": "x", "hold": True}]})
    adapter.call("agent.send", {"agent": "h", "content": [{"type": "text", "text": "q"}]})
    steps = [adapter.call("agent.step", {"agent": "h"})["step"] for _ in range(3)]
    assert steps == ["claim", "submit", "model"]
    assert len(adapter.call("agent.requests", {"agent": "h"})) == 1
    types = [e["type"] for e in adapter.call("agent.log", {"agent": "h"})["events"]]
    assert "assistant/message" not in types
    assert adapter.call("agent.step", {"agent": "h"})["step"] == "stream"
    types = [e["type"] for e in adapter.call("agent.log", {"agent": "h"})["events"]]
    assert types[-1] == "assistant/message"


def test_a_hanging_reply_waits_for_an_interrupt() -> None:
    adapter = ReferenceAdapter()
    adapter.call("agent.create", {"id": "g"})
    adapter.call("agent.script", {"agent": "g", "responses": [{"hang": True}]})
    adapter.call("agent.send", {"agent": "g", "content": [{"type": "text", "text": "q"}]})
    adapter.call("agent.run", {"agent": "g"})
    assert adapter.call("agent.state", {"agent": "g"})["status"] == "running"
    adapter.call("agent.cancel", {"agent": "g"})
    adapter.call("agent.run", {"agent": "g"})
    events = adapter.call("agent.log", {"agent": "g"})["events"]
    assert events[-1]["data"]["reason"] == {"kind": "aborted"}
    assert "assistant/message" not in [e["type"] for e in events]
