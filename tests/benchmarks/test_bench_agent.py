"""Benchmarks for the reference agent: 1,000 sends with contexts, each through a full turn."""

from __future__ import annotations

from typing import Any

from dsh_conformance.model.agent import Agent
from dsh_conformance.model.session import SessionHeader

PREFIX = {
    "source": {"kind": "plugin", "plugin": "session-reference"},
    "content": [{"type": "text", "text": "## Referenced sessions\n\n" + "snapshot " * 200}],
    "placement": "prompt-prefix",
    "meta": {"kind": "session-reference", "version": 1, "references": [{"sessionId": "s"}]},
}
SEPARATE = {
    "source": {"kind": "plugin", "plugin": "note"},
    "content": [{"type": "text", "text": "n"}],
}


def thousand_turns() -> Agent:
    agent = Agent(SessionHeader("bench", cwd="/w"))
    for n in range(1000):
        agent.send([{"type": "text", "text": f"message {n}"}], contexts=[PREFIX, SEPARATE])
        agent.run_until_idle()
    return agent


def test_bench_1000_sends_with_contexts_each_a_full_turn(benchmark: Any) -> None:
    agent = benchmark.pedantic(thousand_turns, rounds=3, iterations=1)
    assert len(agent.requests) == 1000
    assert sum(e.type == "turn/end" for e in agent.events) == 1000
