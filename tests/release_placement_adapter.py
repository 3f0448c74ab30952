"""A deliberately non-conforming adapter: the published release's separate-message placement.

The published upstream release writes the reference snapshot as its own user-role message
after the direct prompt (research note B §3.4) instead of baking it into one prompt event.
This adapter is the reference model with exactly that change: every context, prompt-prefix
included, becomes an independent ``context/message`` after the prompt, and no envelope is
written.  tests/test_release_placement.py pins which requirements it fails (D-76).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.reference.agent_ops import agents
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.placement import PreparedPrompt, context_message_data


def release_placement(
    content: object, source: object, contexts: Sequence[Mapping[str, Any]]
) -> PreparedPrompt:
    """The prompt as given; every context as a separate message after it."""
    data = FrozenDict({"content": content, "source": source})
    return PreparedPrompt(data, tuple(context_message_data(c) for c in contexts))


class ReleaseAgent(Agent):
    place_prompt = staticmethod(release_placement)


class ReleasePlacementAdapter(ReferenceAdapter):
    """The reference adapter whose agents use the release placement."""

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        result = super().call(op, args)
        if op == "agent.create":
            registry = agents(self.state)
            registry[result["agent"]].__class__ = ReleaseAgent
        return result


def factory() -> ReleasePlacementAdapter:
    return ReleasePlacementAdapter()
