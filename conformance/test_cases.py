"""Static cases: verified vectors from data files, each tagged with requirement ids.

Every ``conformance/cases/*.json`` file with ``"format": "dsh-cases/1"`` holds cases
``{id, op, args, expect: {result} | {error: CODE}, req: [...], note?}``; a shrunk failure
from a property or stateful test can be pasted in as a permanent case.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.model.jsstr import canonical_value

FORMAT = "dsh-cases/1"


def _op_capabilities() -> dict[str, str]:
    from dsh_conformance.adapters.reference import REGISTRY, ReferenceAdapter

    ReferenceAdapter()  # loads every op module
    return {name: entry.capability for name, entry in REGISTRY.items()}


def load_cases() -> list[Any]:
    capabilities = _op_capabilities()
    params = []
    folder = resources.files("dsh_conformance.conformance") / "cases"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            continue
        for case in data["cases"]:
            capability = case.get("capability") or capabilities.get(case["op"], "uri")
            params.append(
                pytest.param(
                    case,
                    id=f"{entry.name.removesuffix('.json')}:{case['id']}",
                    marks=[pytest.mark.req(*case["req"]), pytest.mark.capability(capability)],
                )
            )
    return params


@pytest.mark.parametrize("case", load_cases())
def test_case(impl: Implementation, case: dict[str, Any]) -> None:
    args = canonical_value(case["args"])
    assert isinstance(args, dict), "case args must be an object"
    expect = case["expect"]
    if "error" in expect:
        assert impl.error_code(case["op"], **args) == expect["error"], case.get("note", "")
    else:
        assert impl.call(case["op"], **args) == canonical_value(expect["result"])
