"""Each end of the pipelined transport in-process, without the pipe (pytest-benchmark).

The served model answering 2,000 ``uri.encode`` request lines (``Server.handle_lines``, in
reads of 64 lines), and the harness reading 2,000 pre-fed replies (``call_many``): the
two Python halves of reports/performance.md's transport row (D-484), with no process
wake-ups in the figure.  Run with ``python -m pytest tests/benchmarks -p no:randomly
--benchmark-only``; no timed asserts.
"""

from __future__ import annotations

import io
from collections import deque
from typing import Any

import orjson

from dsh_conformance.adapters import serve
from dsh_conformance.adapters.heap import keep_heap
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.model import uri

BATCH = 2000
CALLS = [("uri.encode", {"sessionId": f"session-{i}"}) for i in range(BATCH)]
REQUESTS = [
    orjson.dumps({"id": i, "op": op, "args": args}) for i, (op, args) in enumerate(CALLS, 1)
]


def test_served_model_answers_a_pipelined_batch(benchmark: Any) -> None:
    keep_heap()
    server = serve.Server(ReferenceAdapter(), stdout=io.BytesIO())

    def answer() -> None:
        for start in range(0, BATCH, serve.FLUSH_EVERY):
            server.handle_lines(REQUESTS[start : start + serve.FLUSH_EVERY])
            server.pending.clear()

    benchmark(answer)
    benchmark.extra_info["calls_per_second"] = BATCH / benchmark.stats.stats.mean


class _Fed:
    """The process's stand-in: the replies to the batch arrive once it is sent."""

    def __init__(self) -> None:
        self.lines: deque[bytes] = deque()
        self.stderr_chunks = 0
        self.ready: list[bytes] = []

    def poll(self) -> None:
        pass

    def drain_stderr(self) -> bool:
        return True

    def send(self, data: bytes) -> None:
        self.lines.extend(self.ready)
        self.ready = []


def test_harness_reads_a_pipelined_batch(benchmark: Any) -> None:
    keep_heap()
    adapter = SubprocessAdapter(["unused"])
    fed = _Fed()
    adapter._process = fed  # type: ignore[assignment]
    results = [uri.encode(args["sessionId"]) for _, args in CALLS]

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        first = adapter._next_id
        fed.ready = [orjson.dumps({"id": first + i, "result": r}) for i, r in enumerate(results)]
        return (CALLS,), {}

    got = benchmark.pedantic(adapter.call_many, setup=setup, rounds=50)
    assert got == results
