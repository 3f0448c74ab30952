"""Harness throughput (pytest-benchmark; targets in the harness brief, numbers in reports).

Targets: >= 5,000 calls/s Python <-> subprocess with pipelining (reference model behind
the pipe), >= 50,000 calls/s in-process, harness overhead per test < 1 ms.  Run with
``python -m pytest tests/benchmarks -p no:randomly --benchmark-only``; these are not
timed asserts.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.guard import FaultGuard
from dsh_conformance.harness.evidence import Evidence
from dsh_conformance.harness.plugin import HarnessPlugin
from dsh_conformance.harness.selection import ItemMeta
from dsh_conformance.record import RecordWriter

BATCH = 2000
CALLS = [("uri.encode", {"sessionId": f"session-{i}"}) for i in range(BATCH)]


@pytest.fixture(scope="module")
def served() -> Iterator[SubprocessAdapter]:
    adapter = SubprocessAdapter([sys.executable, "-m", "dsh_conformance.adapters.serve"])
    adapter.handshake()
    yield adapter
    adapter.close()


def test_subprocess_pipelined_calls(benchmark: Any, served: SubprocessAdapter) -> None:
    """2,000 pipelined uri.encode calls per round: calls/s = 2000 / mean."""
    replies = benchmark(served.call_many, CALLS)
    assert len(replies) == BATCH
    benchmark.extra_info["calls_per_second"] = BATCH / benchmark.stats.stats.mean


def test_subprocess_lockstep_call(benchmark: Any, served: SubprocessAdapter) -> None:
    """One round trip at a time (what a conformance test does)."""
    assert benchmark(served.call, "uri.encode", {"sessionId": "x"}).startswith("dsh-session:")


def test_in_process_calls(benchmark: Any) -> None:
    """The reference model through the guard and the client, as tests call it."""
    impl = Implementation(FaultGuard(ReferenceAdapter()), "reference")

    def many() -> None:
        for op, args in CALLS:
            impl.call(op, **args)

    benchmark(many)
    benchmark.extra_info["calls_per_second"] = BATCH / benchmark.stats.stats.mean


def test_harness_overhead_per_test(benchmark: Any, tmp_path: Path) -> None:
    """What the harness adds to one test: setup hook, classification, record line."""
    config = SimpleNamespace(stash={}, getoption=lambda name, default=None: default)
    plugin = HarnessPlugin(config)  # type: ignore[arg-type]
    plugin.writer = RecordWriter(tmp_path / "record.jsonl")
    meta = ItemMeta("conformance/test_x.py::test_y[a]", ("URI-001", "URI-004"), ("uri",), None)
    report = SimpleNamespace(
        passed=True, skipped=False, when="call", duration=0.001, nodeid="n", longrepr=None
    )
    item = SimpleNamespace(nodeid="n")

    def one_test() -> None:
        plugin.meta["n"] = meta
        plugin.pytest_runtest_setup(item)  # type: ignore[arg-type]
        plugin._classify(
            report,
            SimpleNamespace(excinfo=None),
            meta,  # type: ignore[arg-type]
            plugin.progress["n"],
        )
        plugin.pytest_runtest_logreport(report)  # type: ignore[arg-type]
        plugin.pytest_runtest_logfinish("n", ("", 0, ""))

    benchmark(one_test)
    plugin.writer.close()
    assert isinstance(plugin.progress, dict)
    assert not plugin.progress
    assert Evidence is not None
