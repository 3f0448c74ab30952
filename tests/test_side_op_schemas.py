"""The side.* operations honour their published schemas (spec/schemas/ops/side.json)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter

SCHEMAS = resources.files("dsh_conformance.spec") / "schemas"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return data


def registry() -> Registry:
    items = [load("data.json"), load("ops/side.json")]
    return Registry().with_resources([(d["$id"], Resource.from_contents(d)) for d in items])


SIDE = load("ops/side.json")


class Checked:
    """A reference adapter whose side.* calls are validated against the schema."""

    def __init__(self) -> None:
        self.adapter = ReferenceAdapter()
        self.registry = registry()

    def validate(self, schema: dict[str, Any], value: object) -> None:
        jsonschema.Draft202012Validator(
            {"$id": SIDE["$id"], "$defs": SIDE["$defs"], **schema}, registry=self.registry
        ).validate(value)

    def call(self, op: str, **args: Any) -> Any:
        spec = SIDE["ops"].get(op)
        try:
            result = self.adapter.call(op, args)
        except ImplementationError as exc:
            if spec is not None and exc.code not in spec["errors"]:
                raise AssertionError(f"{op} failed with unlisted {exc.code}") from exc
            raise
        if spec is not None:
            self.validate(spec["args"], args)  # accepted arguments are valid ones
            self.validate(spec["result"], result)
        return result


def test_side_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SIDE)


def test_every_side_op_is_registered_with_its_capability() -> None:
    from dsh_conformance.adapters.reference import REGISTRY

    ReferenceAdapter()
    for name, spec in SIDE["ops"].items():
        assert REGISTRY[name].capability == spec["capability"], name


def test_a_side_session_round_validates() -> None:
    impl = Checked()
    text = [{"type": "text", "text": "q"}]
    impl.call("agent.create", id="p", header={"cwd": "/w"}, options={"tools": [{"name": "t"}]})
    impl.call("agent.send", agent="p", content=text)
    impl.call("agent.run", agent="p")
    impl.call("side.compact", agent="p", summary="s")
    impl.call("side.fork", parent="p", child="c")
    impl.call("side.fork", parent="p", child="late", frame=False)
    impl.call("side.frame", child="late")
    impl.call("side.gate", child="c", deny=["t"])
    impl.call("agent.script", agent="c", responses=[{"text": "note " * 2000}])
    impl.call("side.askHandback", child="c", cap=300)
    impl.call("agent.run", agent="c")
    impl.call("side.mergeBack", parent="p", child="c", cap=300)
    impl.call("side.mergeBack", parent="p", child="c", text="explicit")
    impl.call("agent.send", agent="p", content=text)
    impl.call("agent.script", agent="p", responses=[{"toolCalls": [{"name": "t"}]}])
    while not impl.call("agent.state", agent="p")["toolBatch"]:
        impl.call("agent.step", agent="p")
    impl.call("side.mergeBack", parent="p", child="c")
    for op, args in [
        ("side.frame", {"child": "c"}),
        ("side.mergeBack", {"parent": "c", "child": "late"}),
        ("side.mergeBack", {"parent": "p", "child": "c", "cap": 100}),
        ("side.mergeBack", {"parent": "p", "child": "late"}),
        ("side.mergeBack", {"parent": "p", "child": "c", "text": "x" * 5000}),
        ("side.fork", {"parent": "nobody"}),
        ("side.compact", {"agent": "p", "summary": "mid-turn"}),
    ]:
        with pytest.raises(ImplementationError):
            impl.call(op, **args)
