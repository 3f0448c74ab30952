"""side.scenario.run honours its published schema (spec/schemas/ops/side_scenario.json):
the hand-picked programs are valid arguments, and the reference's and the side kit's
outcomes are valid results; bad scripts are refused with the listed typed errors."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

sys.path.insert(0, str(Path(__file__).parent))
import side_kit

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import REGISTRY, ReferenceAdapter
from dsh_conformance.conformance.side_scenario_programs import EXAMPLES

SCHEMAS = resources.files("dsh_conformance.spec") / "schemas"
NAMES = ("data.json", "ops/agent.json", "ops/scenario.json", "ops/side_scenario.json")
LOADED = {n: json.loads((SCHEMAS / n).read_text(encoding="utf-8")) for n in NAMES}
SPEC = LOADED["ops/side_scenario.json"]
OP = SPEC["ops"]["side.scenario.run"]


def validate(schema: dict[str, Any], value: object) -> None:
    registry: Registry[Any] = Registry().with_resources(
        (d["$id"], Resource.from_contents(d)) for d in LOADED.values()
    )
    jsonschema.Draft202012Validator(
        {"$id": SPEC["$id"], "$defs": SPEC["$defs"], **schema}, registry=registry
    ).validate(value)


def test_the_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SPEC)


def test_the_op_is_registered_with_its_capability() -> None:
    ReferenceAdapter()
    assert REGISTRY["side.scenario.run"].capability == OP["capability"] == "side.scenario"


@pytest.mark.parametrize("factory", [ReferenceAdapter, side_kit.side_kit])
@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_programs_and_outcomes_validate(factory: Any, index: int) -> None:
    script = EXAMPLES[index]
    validate(OP["args"], script)
    validate(OP["result"], factory().call("side.scenario.run", script))


@pytest.mark.parametrize(
    ("script", "code"),
    [
        ({}, "DSH_SCENARIO_INVALID"),
        ({**EXAMPLES[0], "child": "parent"}, "DSH_SCENARIO_INVALID"),
        ({**EXAMPLES[0], "steps": [{"do": "jump"}]}, "DSH_SCENARIO_INVALID"),
        (
            {**EXAMPLES[0], "steps": [{"do": "fork", "on": {"request": 99}}]},
            "DSH_SCENARIO_UNREACHABLE",
        ),
        ({**EXAMPLES[0], "replies": {"parent": [{"hang": True}]}}, "DSH_SCENARIO_UNREACHABLE"),
        (
            {**EXAMPLES[0], "replies": {"child": [{"toolCalls": [{"id": "x", "name": "nope"}]}]}},
            "DSH_SCENARIO_UNKNOWN_TOOL",
        ),
    ],
)
def test_a_bad_script_is_refused_with_a_listed_code(script: dict[str, Any], code: str) -> None:
    with pytest.raises(ImplementationError) as caught:
        ReferenceAdapter().call("side.scenario.run", script)
    assert caught.value.code == code
    assert code in OP["errors"]
    assert caught.value.message.startswith("/")
