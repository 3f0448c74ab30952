"""Static cases: verified vectors from data files, each tagged with requirement ids.

Every ``conformance/cases/*.json`` file with ``"format": "dsh-cases/1"`` holds cases
``{id, op, args, expect: {result} | {error: CODE}, req: [...], note?}``; a shrunk failure
from a property or stateful test can be pasted in as a permanent case.
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect_equal, expect_error
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
                pytest.mark.req("REF-010", *case["req"]),
                pytest.mark.capability(
                    case.get("capability") or capabilities.get(case["op"], "uri")
                ),
            ],
        )
        for stem, case in cases(FORMAT)
    ]


@pytest.mark.parametrize("case", load_cases())
def test_case(impl: Implementation, case: dict[str, Any]) -> None:
    """A vector is byte identity (REF-010, D-163): the requirements a case lists are what it
    illustrates, and are judged by the property tests, not by these exact bytes."""
    args = canonical_value(case["args"])
    assert isinstance(args, dict), "case args must be an object"
    expected = case["expect"]
    if "error" in expected:
        expect_error("REF-010", impl, case["op"], args, codes={expected["error"]})
    else:
        with check("REF-010", case=case["id"], op=case["op"], args=args):
            actual = impl.call(case["op"], **args)
        expect_equal("REF-010", actual, canonical_value(expected["result"]), case=case["id"])
