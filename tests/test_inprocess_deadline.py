"""In-process adapters get a per-call timeout: a hang costs one test, not the run (D-164)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hanging_inprocess import HangsOnDecode
from harness_cli import complete, outcomes, run_record

from dsh_conformance.adapters.contract import AdapterFault
from dsh_conformance.adapters.deadline import InProcessDeadline


def test_a_hung_call_raises_a_timeout_fault_and_the_adapter_stays_usable() -> None:
    adapter = InProcessDeadline(HangsOnDecode(), timeout=0.2)
    try:
        assert adapter.enabled
        with pytest.raises(AdapterFault) as info:
            adapter.call("uri.decode", {"uri": "dsh-session:ImEi"})
        assert info.value.kind == "timeout"
        assert "uri.decode" in info.value.message
        assert adapter.call("uri.encode", {"sessionId": "a"}) == "dsh-session:ImEi"
    finally:
        adapter.close()


def test_calls_that_return_in_time_are_untouched() -> None:
    adapter = InProcessDeadline(HangsOnDecode(), timeout=5)
    try:
        for _ in range(1000):
            assert adapter.call("uri.encode", {"sessionId": "a"}) == "dsh-session:ImEi"
    finally:
        adapter.close()


def test_off_the_main_thread_calls_run_without_a_deadline() -> None:
    seen: list[bool] = []
    thread = threading.Thread(
        target=lambda: seen.append(InProcessDeadline(HangsOnDecode(), timeout=1).enabled)
    )
    thread.start()
    thread.join()
    assert seen == [False]


def test_a_hanging_in_process_implementation_times_out_per_test(tmp_path: Path) -> None:
    done, record = run_record(
        tmp_path,
        "python:hanging_inprocess:hangs",
        "--requirement",
        "URI-002",
        "--timeout",
        "0.5",
        "--hypothesis-profile",
        "quick",
    )
    complete(record)
    counts = outcomes(record)
    assert counts.get("timeout", 0) >= 1, counts
    assert done.returncode == 1
