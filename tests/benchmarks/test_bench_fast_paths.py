"""Benchmarks for the fast paths of issue 15 (pytest-benchmark; no timed asserts).

The side-by-side ratios against the published release come from
``python tools/bench_upstream.py`` (reports/performance.md); these track each optimised
operation on its own, on the same inputs.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

from dsh_conformance.adapters import wire
from dsh_conformance.model import jsstr, mentions, uri
from dsh_conformance.model.projection import project
from dsh_conformance.model.retention import retain
from dsh_conformance.model.serialization import stringify_tag_safe
from dsh_conformance.model.snapshot import SessionSnapshot

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import bench_upstream as inputs


@cache
def snapshot(messages: int = 1000) -> SessionSnapshot:
    return SessionSnapshot.from_json(inputs.snapshot_json(messages))


def test_bench_uri_round_trip_1kib_lone_surrogate(benchmark: Any) -> None:
    sid = inputs.ID_1K_LONE
    assert benchmark(lambda: uri.decode(uri.encode(sid))) == sid


def test_bench_uri_round_trip_short(benchmark: Any) -> None:
    sid = inputs.ID_SHORT
    assert benchmark(lambda: uri.decode(uri.encode(sid))) == sid


def test_bench_mention_parse_64kib(benchmark: Any) -> None:
    assert len(benchmark(mentions.parse, inputs.mention_text()).references) == 3


def test_bench_tag_safe_64kib_data(benchmark: Any) -> None:
    data = retain(snapshot(), "big").data
    assert "<" not in benchmark(stringify_tag_safe, data)


def test_bench_projection_1000_messages(benchmark: Any) -> None:
    assert len(benchmark(project, snapshot().events)) == 1000


def test_bench_retention_1000_messages(benchmark: Any) -> None:
    result = benchmark(retain, snapshot(), "big")
    assert result.size <= 65_536


def test_bench_wire_line_round_trip(benchmark: Any) -> None:
    message = wire.request(17, "uri.encode", {"sessionId": "session-17"})

    def round_trip() -> dict[str, Any]:
        return wire.decode(wire.encode(message).rstrip(b"\n"))

    assert benchmark(round_trip) == message


def test_bench_has_surrogate_64kib(benchmark: Any) -> None:
    assert benchmark(jsstr.has_surrogate, inputs.mention_text()) is False
