"""HOST-008 / V-19 (decision D-53): a host without the reference service declares no
prepare/candidates capability, and its operations answer DSH_UNSUPPORTED_OPERATION."""

from __future__ import annotations

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter

OPS = {
    "prepare": {"target": {"id": "t"}, "content": [], "references": []},
    "candidates.list": {"target": {"id": "t"}},
    "projection.project": {"session": {"header": {"id": "s"}, "events": []}},
}


@pytest.mark.parametrize("op", sorted(OPS))
def test_missing_capability_is_unsupported_not_wrong(op: str) -> None:
    impl = Implementation(ReferenceAdapter(capabilities=frozenset({"uri", "mention"})))
    assert not impl.supports("prepare")
    assert not impl.supports("candidates")
    assert impl.error_code(op, **OPS[op]) == "DSH_UNSUPPORTED_OPERATION"
    full = Implementation(ReferenceAdapter())
    assert full.error_code(op, **OPS[op]) is None
