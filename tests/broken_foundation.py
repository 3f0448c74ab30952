"""Broken implementations for holes closed in the foundation areas (issue 11 item 9).

Each wraps the reference model and breaks exactly one rule; tests/test_harness_faux.py
checks that each is blamed on its own requirement ids.  Selectable as
``python:broken_foundation:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fauxmplementations import _Broken

from dsh_conformance.adapters.contract import ImplementationError


class WrongSerializerCode(_Broken):
    """Rejects undefined with an unrelated code (SER-005 used to accept any code)."""

    name = "undefined rejected with DSH_INVALID_ARGUMENT"

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        if "value" not in args:
            raise ImplementationError("DSH_INVALID_ARGUMENT", "value is required")
        return self.reference.call("json.tagSafe", args)


def wrong_ser_code() -> WrongSerializerCode:
    return WrongSerializerCode()
