"""Every operation is published as a JSON Schema, and the reference model honours it."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from referencing import Registry, Resource

from dsh_conformance.adapters.reference import REGISTRY, ReferenceAdapter
from dsh_conformance.conformance.strategies import js_strings

SCHEMAS = resources.files("dsh_conformance.spec") / "schemas"


def op_files() -> dict[str, dict[str, Any]]:
    files = {}
    for entry in (SCHEMAS / "ops").iterdir():
        if entry.name.endswith(".json"):
            files[entry.name] = json.loads(entry.read_text(encoding="utf-8"))
    return files


def registry() -> Registry:
    resources_ = []
    for name in ("data.json", "protocol.json"):
        data = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
        resources_.append((data["$id"], Resource.from_contents(data)))
    for data in op_files().values():
        resources_.append((data["$id"], Resource.from_contents(data)))
    return Registry().with_resources(resources_)


def published_ops() -> dict[str, tuple[str, dict[str, Any]]]:
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for data in op_files().values():
        for name, spec in data.get("ops", {}).items():
            out[name] = (data["$id"], spec)
    return out


def test_every_registered_operation_is_published() -> None:
    ReferenceAdapter()
    missing = sorted(set(REGISTRY) - set(published_ops()))
    assert not missing, f"operations without a schema in spec/schemas/ops/: {missing}"


def test_published_capabilities_match_the_reference_adapter() -> None:
    ReferenceAdapter()
    for name, (_, spec) in published_ops().items():
        if name in REGISTRY and "capability" in spec:
            assert spec["capability"] == REGISTRY[name].capability, name


def _check(op: str, args: dict[str, Any]) -> None:
    base, spec = published_ops()[op]
    reg = registry()

    def validate(schema: dict[str, Any], value: object) -> None:
        jsonschema.Draft202012Validator({"$id": base, **schema}, registry=reg).validate(value)

    validate(spec["args"], args)
    validate(spec["result"], ReferenceAdapter().call(op, args))


@given(js_strings())
def test_foundation_results_validate(sid: str) -> None:
    uri = ReferenceAdapter().call("uri.encode", {"sessionId": sid})
    _check("uri.encode", {"sessionId": sid})
    _check("uri.decode", {"uri": uri})
    _check("mention.format", {"sessionId": sid, "label": sid})
    _check("mention.parse", {"text": f"see {uri} and @[x]({uri})"})
    _check("json.tagSafe", {"value": {"a": [sid, "<"]}})


@pytest.mark.parametrize("name", ["data.json", "protocol.json", "catalog.json"])
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(
        json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    )
