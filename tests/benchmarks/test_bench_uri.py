"""Benchmarks for the foundation slice (issue targets: ≥100k round-trips/s; parse < 1 ms)."""

from __future__ import annotations

from typing import Any

from dsh_conformance.model import mentions, uri

ID_1K = ('session/引号"\\\n' * 80)[:1024]


def test_bench_uri_round_trip_1kib(benchmark: Any) -> None:
    def round_trip() -> str:
        return uri.decode(uri.encode(ID_1K))

    assert benchmark(round_trip) == ID_1K


def test_bench_parse_64kib_with_three_mentions(benchmark: Any) -> None:
    mention = mentions.format_mention("source-session", "Source")
    filler = "lorem ipsum dolor sit amet, 引号 consectetur [x](y) @ not-a-mention " * 300
    chunk = filler[: 64 * 1024 // 3]
    text = chunk + mention + chunk + uri.encode("b") + " " + chunk + mention
    result = benchmark(mentions.parse, text)
    assert len(result.references) == 3
