"""Benchmarks for side sessions: forking a 1,000-turn parent, merging a 1 MB handback."""

from __future__ import annotations

from functools import cache
from typing import Any

from dsh_conformance.model import jsstr, side
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.session import SessionHeader
from dsh_conformance.model.side_merge import merged_text


@cache
def parent_events() -> tuple[Any, ...]:
    agent = Agent(SessionHeader("parent", cwd="/w"))
    for n in range(1000):
        agent.send([{"type": "text", "text": f"message {n}"}])
        agent.run_until_idle()
    return agent.events


def fork_once() -> Agent:
    agents: dict[str, Agent] = {"parent": Agent(SessionHeader("parent", cwd="/w"), parent_events())}
    result = side.fork(agents, "parent", child_id="child")
    return agents[result.child]


def test_bench_fork_a_1000_turn_parent(benchmark: Any) -> None:
    child = benchmark.pedantic(fork_once, rounds=3, iterations=1)
    assert child.header.seed_length == len(parent_events())


def test_bench_merge_a_1mb_handback_into_4096_bytes(benchmark: Any) -> None:
    handback = "界 note " * 110_000
    merged = benchmark(merged_text, handback, 4096, explicit=False)
    assert jsstr.utf8_length(merged.text) <= 4096
    assert merged.truncated
