"""Static cases: verified vectors from data files, each tagged with requirement ids.

Every ``conformance/cases/*.json`` file with ``"format": "dsh-cases/1"`` holds cases
``{id, op, args, expect: {result} | {error: CODE}, req: [...], note?}``; a shrunk failure
from a property or stateful test can be pasted in as a permanent case.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.casefiles import cases
from dsh_conformance.model.jsstr import canonical_value

FORMAT = "dsh-cases/1"


def _op_capabilities() -> dict[str, str]:
    from dsh_conformance.adapters.reference import REGISTRY, ReferenceAdapter

    ReferenceAdapter()  # loads every op module
    return {name: entry.capability for name, entry in REGISTRY.items()}


def load_cases() -> list[Any]:
    capabilities = _op_capabilities()
    return [
        pytest.param(
            case,
            id=f"{stem}:{case['id']}",
            marks=[
                pytest.mark.req(*case["req"]),
                pytest.mark.capability(
                    case.get("capability") or capabilities.get(case["op"], "uri")
                ),
            ],
        )
        for stem, case in cases(FORMAT)
    ]


@pytest.mark.parametrize("case", load_cases())
def test_case(impl: Implementation, case: dict[str, Any]) -> None:
    args = canonical_value(case["args"])
    assert isinstance(args, dict), "case args must be an object"
    expect = case["expect"]
    if "error" in expect:
        assert impl.error_code(case["op"], **args) == expect["error"], case.get("note", "")
    else:
        assert impl.call(case["op"], **args) == canonical_value(expect["result"])
