"""An empty source under a 100-byte cap, read on the host's own measure (D-332).

Keeps a host whose own fixed fields are larger than the reference's (it fails there and
says so through its own serializedBytes: only RET-014, the reference's object, fails) and
catches one that fails although its own serialization of the empty source fits (RET-004).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.checks import blamed, collect
from dsh_conformance.conformance import test_retention

BUDGET = "SESSION_REFERENCE_BUDGET_EXCEEDED"


class _FixedFields:
    """The reference, except that an empty source takes *own* bytes on this host's measure
    and fails any cap below them; *claims* is the size it reports (a broken host reports
    less than it needs)."""

    def __init__(self, own: int, claims: int) -> None:
        self.inner = ReferenceAdapter()
        self.own, self.claims = own, claims

    def handshake(self) -> Any:
        return self.inner.handshake()

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        empty = op == "retention.retain" and not args["session"]["events"]
        if empty and args["maxBytes"] < self.own:
            raise ImplementationError(BUDGET, "this source's fixed fields cannot fit its cap")
        result = self.inner.call(op, args)
        if empty:
            result["source"]["serializedBytes"] = self.claims
        return result

    def close(self) -> None:
        self.inner.close()


def _blamed(adapter: _FixedFields) -> tuple[str, ...]:
    try:
        with collect():
            test_retention.test_empty_source_over_a_tiny_cap_fails(Implementation(adapter))
    except AssertionError as exc:
        return blamed(exc)
    return ()


def test_a_host_with_larger_fixed_fields_fails_only_the_reference_object() -> None:
    assert _blamed(_FixedFields(own=150, claims=150)) == ("RET-014",)


def test_a_host_that_fails_although_its_fields_fit_breaks_ret_004() -> None:
    assert "RET-004" in _blamed(_FixedFields(own=150, claims=94))


@pytest.mark.parametrize("own", [94, 100])
def test_the_reference_measure_passes(own: int) -> None:
    assert _blamed(_FixedFields(own=own, claims=94)) == ()
