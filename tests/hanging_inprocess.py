"""An in-process implementation that hangs in one operation (D-164 fault kit)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.reference import ReferenceAdapter


class HangsOnDecode(ReferenceAdapter):
    """The reference model, except that ``uri.decode`` never returns."""

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "uri.decode":
            while True:
                time.sleep(0.05)
        return super().call(op, args)


def hangs() -> HangsOnDecode:
    return HangsOnDecode()
