"""The preparation operations honour their published schemas (spec/schemas/ops/preparation.json)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from referencing import Registry, Resource

from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.strategies_sessions import SessionCase, session_cases

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
