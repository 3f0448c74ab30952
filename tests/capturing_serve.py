"""The reference model served over the stdio protocol, writing every exchange it answers.

``DSH_CAPTURE=FILE python tests/capturing_serve.py``: one JSON line per request, ``{op,
args, reply}``, appended to FILE (tests/test_protocol_reference.py validates each against
the op schemas: what the suite really sends and what the reference really answers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import Server


class CapturingServer(Server):
    def __init__(self, path: str) -> None:
        super().__init__(ReferenceAdapter())
        self.capture = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the run

    def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().dispatch(message)
        entry = {"op": message.get("op"), "args": message.get("args"), "reply": reply}
        self.capture.write(json.dumps(entry, ensure_ascii=True) + "\n")
        self.capture.flush()
        return reply


if __name__ == "__main__":
    raise SystemExit(CapturingServer(os.environ["DSH_CAPTURE"]).serve())
