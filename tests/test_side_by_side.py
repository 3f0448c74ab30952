"""``both``: a differential test's two calls, the host's sent before the oracle works.

The differential tests (``conformance/side_by_side.py``, D-537) must see what they saw
asking ``impl.call`` then ``oracle.call``: the same two results, impl's error raised
first even when the oracle fails too, and the host asked exactly once.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation, ImplementationError
from dsh_conformance.adapters.contract import Handshake, ImplementationInfo
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.conformance.side_by_side import both


class Scripted:
    """An in-process adapter that logs each call and answers what it was given."""

    def __init__(self, name: str, log: list[str], answer: Any) -> None:
        self.name, self.log, self.answer = name, log, answer

    def handshake(self) -> Handshake:
        info = ImplementationInfo(name=self.name, language="python")
        return Handshake(implementation=info, capabilities=frozenset({"uri"}))

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        self.log.append(f"{self.name} {op} {dict(args)}")
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def close(self) -> None:
        pass


def _pair(impl_answer: Any, oracle_answer: Any) -> tuple[Implementation, Implementation, list[str]]:
    log: list[str] = []
    impl = Implementation(Scripted("impl", log, impl_answer), "impl", validate=False)
    oracle = Implementation(Scripted("oracle", log, oracle_answer), "ref", validate=False)
    return impl, oracle, log


def test_both_results_and_the_host_asked_first_and_once() -> None:
    impl, oracle, log = _pair("theirs", "ours")
    assert both(impl, oracle, "uri.encode", {"sessionId": "a"}) == ("theirs", "ours")
    assert log == ["impl uri.encode {'sessionId': 'a'}", "oracle uri.encode {'sessionId': 'a'}"]


def test_the_hosts_error_is_raised_before_the_oracles() -> None:
    impl, oracle, _ = _pair(ImplementationError("DSH_X", "theirs"), ValueError("ours"))
    with pytest.raises(ImplementationError) as caught:
        both(impl, oracle, "uri.encode", {"sessionId": "a"})
    assert caught.value.code == "DSH_X"
    impl, oracle, _ = _pair(ImplementationError("DSH_X", "theirs"), "ours")
    with pytest.raises(ImplementationError):
        both(impl, oracle, "uri.encode", {"sessionId": "a"})
    impl, oracle, _ = _pair("theirs", ValueError("ours"))  # the oracle's own failure stays
    with pytest.raises(ValueError, match="ours"):
        both(impl, oracle, "uri.encode", {"sessionId": "a"})


def test_a_served_host_answers_as_when_called() -> None:
    served = SubprocessAdapter([sys.executable, "-m", "dsh_conformance.adapters.serve"])
    impl = Implementation(served, "served")
    oracle = Implementation(ReferenceAdapter(), "reference", validate=False)
    try:
        args = {"sessionId": "\ud800x"}
        got, want = both(impl, oracle, "uri.encode", args)
        assert got == want == impl.call("uri.encode", **args)
        assert served.calls == 2  # both, then the call
    finally:
        impl.close()
