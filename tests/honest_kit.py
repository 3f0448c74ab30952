"""Adapters for the "a green cannot lie" tests (issue 23, D-175..D-179).

Selectable as ``python:honest_kit:<factory>`` with ``tests/`` on the path (tests/harness_cli.py
puts it there).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.contract import Handshake, ImplementationInfo
from dsh_conformance.adapters.reference import ReferenceAdapter


class _Declaring:
    """The reference model, declaring only *capabilities* in its handshake."""

    capabilities: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.reference = ReferenceAdapter()

    def handshake(self) -> Handshake:
        return Handshake(
            implementation=ImplementationInfo(name="honest-kit", language="python"),
            capabilities=self.capabilities,
        )

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        return self.reference.call(op, args)

    def close(self) -> None:
        self.reference.close()


class Empty(_Declaring):
    """Declares no capability at all: every test is unsupported, nothing is checked."""


class UriOnly(_Declaring):
    """Declares only ``uri``: a host that silently dropped every other capability."""

    capabilities = frozenset({"uri"})


class KillsItsWorker(_Declaring):
    """The reference model, which SIGKILLs the process it runs in at its 40th call, once
    per ``$DSH_KIT_ONCE`` file: under ``--workers`` that is a pytest-xdist worker dying
    mid-run (``kill -9`` of a worker)."""

    capabilities = ReferenceAdapter().handshake().capabilities

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        import os
        import signal
        from pathlib import Path

        self.calls += 1
        once = Path(os.environ["DSH_KIT_ONCE"])
        if self.calls == 40 and os.environ.get("PYTEST_XDIST_WORKER"):
            try:
                once.touch(exist_ok=False)
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return self.reference.call(op, args)


def _has_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


class DiesOnNul(_Declaring):
    """The reference model, whose process exits (status 3) on any argument holding U+0000:
    served with ``python -m dsh_conformance.adapters.serve --adapter python:honest_kit:DiesOnNul``
    it is an adapter that crashes on one input and answers every other."""

    capabilities = frozenset({"uri"})

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        import os

        if _has_nul(dict(args)):
            os._exit(3)
        return self.reference.call(op, args)


class PadsLongIds(_Declaring):
    """Keeps base64 padding, but only for session ids of 3 to 20 code units (none of the
    explicit examples): the first failing example Hypothesis generates is not the
    smallest one, so shrinking shows in the number of calls."""

    capabilities = frozenset({"uri"})

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        result = self.reference.call(op, args)
        if op == "uri.encode" and 3 <= len(str(args.get("sessionId", ""))) <= 20:
            return str(result) + "="
        return result
