"""Preparation speed: the reference model vs the published release, on the same input.

    python tools/bench_upstream.py [--repeat N]

The input is the preparation benchmark's source (tests/benchmarks/test_bench_prepare.py):
one session of 10,000 alternating user/assistant messages, ~20 MB of text, prepared under
the default 64 KiB cap.  Reported, as medians:

* reference: ``read_log`` (surface fold) + ``prepare`` in Python, the benchmark's ``run``;
* upstream in Node: the adapter's ``prepare`` op timed inside the shim (``meta.bench``):
  building the real in-memory SessionStore from the log (10,000 validated appends), the
  real query engine's fold, and the published resolver's prepare; no protocol cost;
* upstream end to end: the same op through the protocol (20 MB of JSON each way in).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_bench() -> Any:
    spec = importlib.util.spec_from_file_location(
        "bench_prepare", ROOT / "tests" / "benchmarks" / "test_bench_prepare.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--messages", type=int, default=10_000, help="source size (default 10,000)")
    options = parser.parse_args()
    from dsh_conformance.adapters.client import Implementation
    from dsh_conformance.adapters.registry import resolve

    bench = load_bench()
    log, total = bench.big_log(options.messages)
    reference = []
    for _ in range(options.repeat):
        start = time.perf_counter()
        bench.run(log)
        reference.append((time.perf_counter() - start) * 1000)
    session = {"header": log.header.to_json(), "events": [e.to_json() for e in log.events]}
    args = {
        "target": {"id": "target"},
        "content": bench.CONTENT,
        "references": [{"sessionId": log.header.id}],
        "sessions": {log.header.id: session},
    }
    os.environ.setdefault("DSH_UPSTREAM_TIMEOUT", "600")
    impl = Implementation(resolve("upstream"))
    try:
        result = impl.call("prepare", **args)
        stats = result["contexts"][0]["source"]["references"][0]
        assert stats["originalMessages"] == options.messages
        inside = impl.call("meta.bench", op="prepare", args=args, repeat=options.repeat)["millis"]
        end_to_end = []
        for _ in range(options.repeat):
            start = time.perf_counter()
            impl.call("prepare", **args)
            end_to_end.append((time.perf_counter() - start) * 1000)
    finally:
        impl.close()
    ref, node, e2e = (statistics.median(v) for v in (reference, inside, end_to_end))
    print(f"source: {len(log.events)} messages, {total / 1e6:.1f} MB of text, 64 KiB cap")
    print(f"retained {stats['retainedMessages']} messages, omitted {stats['omittedMessages']}")
    print(f"reference model (Python)      : {ref:8.1f} ms")
    print(f"upstream rc.8 inside Node     : {node:8.1f} ms  ({node / ref:.2f}x the reference)")
    print(f"upstream rc.8 through protocol: {e2e:8.1f} ms  ({e2e / ref:.2f}x the reference)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
