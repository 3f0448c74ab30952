"""The preparation operations honour their published schemas (spec/schemas/ops/preparation.json)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from referencing import Registry, Resource

from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.strategies_sessions import USER, SessionCase, session_cases

SCHEMAS = resources.files("dsh_conformance.spec") / "schemas"
DOC = json.loads((SCHEMAS / "ops" / "preparation.json").read_text(encoding="utf-8"))


def registry() -> Registry:
    pairs = []
    for name in ("data.json", "protocol.json"):
        data = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
        pairs.append((data["$id"], Resource.from_contents(data)))
    pairs.append((DOC["$id"], Resource.from_contents(DOC)))
    return Registry().with_resources(pairs)


REGISTRY = registry()


def check(op: str, args: dict[str, Any]) -> None:
    spec = DOC["ops"][op]

    def validate(schema: dict[str, Any], value: object) -> None:
        full = {"$id": DOC["$id"], "$defs": DOC["$defs"], **schema}
        jsonschema.Draft202012Validator(full, registry=REGISTRY).validate(value)

    validate(spec["args"], args)
    validate(spec["result"], ReferenceAdapter().call(op, args))


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(session_cases())
def test_preparation_results_validate(case: SessionCase) -> None:
    session = case.session
    check("session.surface", {"session": session})
    check("projection.project", {"session": session})
    check("retention.retain", {"session": session, "label": "L", "maxBytes": 4000})
    check("retention.truncate", {"text": "x" * 100, "maxBytes": 40})
    sid = case.id
    check(
        "prepare",
        {
            "target": {"id": "target"},
            "content": [{"type": "text", "text": "q"}],
            "references": [{"sessionId": sid, "label": "L"}],
            "sessions": {sid: session},
            "faults": {sid: {"kind": "delay", "ms": 2}},
            "cancelAt": 5,
        },
    )
    check("candidates.list", {"target": {"id": "t", "cwd": "/w"}, "sessions": {sid: session}})


def test_every_preparation_op_is_published() -> None:
    from dsh_conformance.adapters.reference import REGISTRY as OPS

    ReferenceAdapter()
    ours = {
        name
        for name, entry in OPS.items()
        if entry.capability
        in {"projection", "retention", "retention.truncate", "prepare", "candidates"}
    }
    assert ours == set(DOC["ops"])


def _valid(op: str, result: object) -> bool:
    schema = {"$id": DOC["$id"], "$defs": DOC["$defs"], **DOC["ops"][op]["result"]}
    return jsonschema.Draft202012Validator(schema, registry=REGISTRY).is_valid(result)


def test_the_typed_sources_are_optional_and_described() -> None:
    """Issue 36, D-520: a prepare result with a context may carry `sources` (a host of the
    published protocol 2 answers without), one without a context none or []; a
    retention.retain result may carry `source`; every new field says its meaning and unit."""
    args = {
        "target": {"id": "t"},
        "content": [{"type": "text", "text": "q"}],
        "references": [{"sessionId": "a"}],
        "sessions": {
            "a": {
                "header": {"version": 0, "id": "a", "createdAt": 1},
                "events": [
                    {
                        "type": "user/message",
                        "seq": 0,
                        "time": 0,
                        "surfaceOp": "append",
                        "data": {"content": [{"type": "text", "text": "hi"}], "source": USER},
                    }
                ],
            }
        },
    }
    result = ReferenceAdapter().call("prepare", args)
    assert _valid("prepare", result)
    assert _valid("prepare", {k: v for k, v in result.items() if k != "sources"})
    assert not _valid("prepare", {**result, "sources": []})  # given, it lists every source
    assert _valid("prepare", {"content": [], "contexts": []})
    assert _valid("prepare", {"content": [], "contexts": [], "sources": []})
    assert not _valid("prepare", {"content": [], "contexts": [], "sources": result["sources"]})
    bad = [{**result["sources"][0], "serializedBytes": -1}]
    assert not _valid("prepare", {**result, "sources": bad})
    retained = ReferenceAdapter().call("retention.retain", {"session": args["sessions"]["a"]})
    assert _valid("retention.retain", retained)
    assert _valid("retention.retain", {k: v for k, v in retained.items() if k != "source"})
    for name in ("typedMessage", "typedRetention", "typedSource"):
        node = DOC["$defs"][name]
        assert node["description"]
        for field, spec in node.get("properties", {}).items():
            assert spec.get("description"), f"{name}.{field} has no description"
