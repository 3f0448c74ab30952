"""Hosts frozen at each published protocol version: the reference, served as an adapter
written for that version and never changed since (issue 45 item 1, D-520).

* ``--protocol 1`` (the default): refuses any other offered version (as a strict
  protocol-1 adapter did) and declares ``retention`` without ``retention.truncate``, the
  capability protocol 2 split off (with ``--declares-truncate`` it already declares it).
* ``--protocol 2``: answers protocol 2, as published (2026-12-06).

Both answer the results their version's schemas described: no typed ``sources`` in prepare
results, no ``source`` in retention.retain's (added after protocol 2 was published), and
no ``side.scenario`` capability (added after it too).  Each must keep the verdict it had
(tests/test_protocol_versions.py).

    python tests/old_protocol_host.py [--protocol N] [--declares-truncate]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import Server

#: Capabilities that did not exist when each version was published.
LATER: dict[int, tuple[str, ...]] = {1: ("side.scenario",), 2: ("side.scenario",)}
#: Result fields added after each version was published: (op, field).
LATER_FIELDS: tuple[tuple[str, str], ...] = (
    ("prepare", "sources"),
    ("prepare", "framingBytes"),
    ("retention.retain", "source"),
)


class FrozenReference(ReferenceAdapter):
    """The reference, answering only what its protocol version's schemas held."""

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        result = super().call(op, args)
        if isinstance(result, dict):
            dropped = {name for at, name in LATER_FIELDS if at == op}
            result = {k: v for k, v in result.items() if k not in dropped}
        return result


class OldServer(Server):
    def __init__(self, protocol: int, declares_truncate: bool) -> None:
        super().__init__(FrozenReference())
        self.protocol = protocol
        self.declares_truncate = declares_truncate or protocol >= 2

    def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any]:
        if message.get("op") != "handshake":
            return super().dispatch(message)
        id_ = message.get("id")
        offered = (message.get("args") or {}).get("protocol")
        if self.protocol == 1 and offered != 1:
            return wire.error(id_, "DSH_PROTOCOL_MISMATCH", f"speaks 1, not {offered!r}")
        hello = self.adapter.handshake().to_json()
        hello["protocol"] = self.protocol
        hello["capabilities"] = [c for c in hello["capabilities"] if c not in LATER[self.protocol]]
        if not self.declares_truncate:
            hello["capabilities"].remove("retention.truncate")
        return wire.result(id_, hello)


if __name__ == "__main__":
    argv = sys.argv[1:]
    version = int(argv[argv.index("--protocol") + 1]) if "--protocol" in argv else 1
    raise SystemExit(OldServer(version, "--declares-truncate" in argv).serve())
