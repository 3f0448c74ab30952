"""Benchmarks for snapshot preparation (targets: one source of 10,000 messages and ~20 MB
of text under the 64 KiB cap in < 250 ms, peak memory < 3x the source text)."""

from __future__ import annotations

import tracemalloc
from functools import cache
from typing import Any

from dsh_conformance.model import jsstr
from dsh_conformance.model.prepare import PrepareRun, ReadOutcome, prepare
from dsh_conformance.model.session import SessionHeader, SessionLog
from dsh_conformance.model.snapshot import read_log

CONTENT = [{"type": "text", "text": "what did @big decide?"}]


@cache
def big_log(messages: int = 10_000, size: int = 2_000) -> tuple[SessionLog, int]:
    """A source of *messages* alternating user/assistant texts of *size* bytes each."""
    log = SessionLog(SessionHeader("big", 1, "/w"))
    filler = "lorem ipsum <dolor> sit amet 界 " * (size // 20)
    total = 0
    for i in range(messages):
        text = (f"message {i}: " + filler)[:size]
        total += jsstr.utf8_length(text)
        if i % 2 == 0:
            data: dict[str, Any] = {
                "content": [{"type": "text", "text": text}],
                "source": {"kind": "user"},
            }
            log.append("user/message", data)
        else:
            log.append(
                "assistant/message",
                {"turn": i, "step": 0, "content": [{"type": "text", "text": text}]},
            )
    return log, total


@cache
def one_huge_message() -> tuple[SessionLog, int]:
    log = SessionLog(SessionHeader("huge", 1))
    text = "界<x" * 4_000_000  # 20 MB, escaped even larger
    log.append(
        "user/message", {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    )
    return log, jsstr.utf8_length(text)


def run(log: SessionLog) -> PrepareRun:
    def read(_: str) -> ReadOutcome:
        return ReadOutcome.ok(read_log(log))

    return prepare("target", CONTENT, [{"sessionId": log.header.id}], read)


def test_bench_prepare_10k_messages_20mb(benchmark: Any) -> None:
    log, total = big_log()
    assert total > 19_000_000
    result = benchmark(run, log)
    meta = result.contexts[0]["meta"]["references"][0]
    assert meta["originalMessages"] == 10_000
    assert meta["truncated"] is True


def test_bench_prepare_one_20mb_message(benchmark: Any) -> None:
    log, _ = one_huge_message()
    result = benchmark(run, log)
    assert result.contexts[0]["meta"]["references"][0]["retainedMessages"] == 1


def test_peak_memory_is_below_three_times_the_source_text() -> None:
    for log, total in (big_log(), one_huge_message()):
        tracemalloc.start()
        try:
            run(log)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 3 * total, f"peak {peak} bytes for {total} bytes of source text"
