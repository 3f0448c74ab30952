"""The agent operations honour their published schemas (spec/schemas/ops/agent.json)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
from referencing import Registry, Resource

from dsh_conformance.adapters.reference import ReferenceAdapter

SCHEMAS = resources.files("dsh_conformance.spec") / "schemas"


def _load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return data


AGENT = _load("ops/agent.json")
REGISTRY = Registry().with_resources(
    [(d["$id"], Resource.from_contents(d)) for d in (_load("data.json"), AGENT)]
)


def validate(op: str, part: str, value: Any) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": AGENT["$id"],
        "$defs": AGENT["$defs"],
        **AGENT["ops"][op][part],
    }
    jsonschema.Draft202012Validator(schema, registry=REGISTRY).validate(value)


def call(adapter: ReferenceAdapter, op: str, **args: Any) -> Any:
    validate(op, "args", args)
    result = adapter.call(op, args)
    validate(op, "result", result)
    return result


def test_a_scenario_validates_against_the_agent_schemas() -> None:
    jsonschema.Draft202012Validator.check_schema(AGENT)
    a = ReferenceAdapter()
    tools = [{"name": "t", "description": "d", "result": [{"type": "text", "text": "r"}]}]
    call(a, "agent.create", id="s", options={"tools": tools, "persona": "p"})
    call(
        a,
        "agent.listen",
        agent="s",
        listener={"kind": "rewrite", "content": [{"type": "text", "text": "R"}]},
    )
    call(a, "agent.script", agent="s", responses=[{"toolCalls": [{"name": "t"}]}, {"text": "ok"}])
    prefix = {
        "source": {"kind": "plugin", "plugin": "x"},
        "content": [{"type": "text", "text": "P"}],
        "placement": "prompt-prefix",
        "meta": {"m": 1},
    }
    call(a, "agent.send", agent="s", content=[{"type": "text", "text": "hi"}], contexts=[prefix])
    call(a, "agent.step", agent="s")
    call(a, "agent.steer", agent="s", content=[{"type": "text", "text": "st"}])
    call(a, "agent.inject", agent="s", content=[{"type": "text", "text": "in"}], meta=None)
    call(a, "agent.state", agent="s")
    call(a, "agent.run", agent="s", maxSteps=1000)
    call(a, "agent.cancel", agent="s", cause={"kind": "user"})
    for op in (
        "agent.log",
        "agent.requests",
        "agent.notifications",
        "agent.submissions",
        "agent.system",
    ):
        call(a, op, agent="s")
    call(a, "agent.dispose", agent="s")
    call(a, "agent.notifications", agent="s")
