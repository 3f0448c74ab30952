"""A host written against protocol 1: the reference, served, as an adapter of that era.

It refuses any other offered version (as a strict protocol-1 adapter did) and declares
``retention`` without ``retention.truncate``, the capability protocol 2 split off.  With
``--declares-truncate`` it is a protocol-1 host that already declares the new name.

    python tests/old_protocol_host.py [--declares-truncate]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import Server


class OldServer(Server):
    def __init__(self, declares_truncate: bool) -> None:
        super().__init__(ReferenceAdapter())
        self.declares_truncate = declares_truncate

    def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if message.get("op") != "handshake":
            return super().dispatch(message)
        id_ = message.get("id")
        offered = (message.get("args") or {}).get("protocol")
        if offered != 1:
            return wire.error(id_, "DSH_PROTOCOL_MISMATCH", f"speaks 1, not {offered!r}")
        hello = self.adapter.handshake().to_json()
        hello["protocol"] = 1
        if not self.declares_truncate:
            hello["capabilities"].remove("retention.truncate")
        return wire.result(id_, hello)


if __name__ == "__main__":
    raise SystemExit(OldServer("--declares-truncate" in sys.argv[1:]).serve())
