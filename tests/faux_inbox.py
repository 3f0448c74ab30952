"""Broken inbox implementations that only speak ``scenario`` (no micro-step ``agent`` ops).

Each is the reference model with one ownership rule broken inside its agent, exposed the
way a real host would be: ``scenario.run`` on its own loop, the ``agent`` capability not
declared.  tests/test_scenario_faux.py runs the scenario tests against each through the CLI
and checks they are blamed on the right requirement ids.  Selectable as
``python:faux_inbox:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from release_placement_adapter import ReleaseAgent

from dsh_conformance.adapters.contract import Handshake, ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.reference.agent_ops import decode_hostile
from dsh_conformance.adapters.reference.scenario_ops import uses_side
from dsh_conformance.model import scenario
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.placement import PreparedPrompt, prepare_prompt_message
from dsh_conformance.model.session import Event

HIDDEN = frozenset({"agent", "side", "side.deny-gate"})
DELIM = {"type": "text", "text": "\n\n## My request:\n"}


class ScenarioOnly(ReferenceAdapter):
    """The reference adapter without the micro-step ops; ``scenario.run`` uses ``agent``."""

    agent: type[Agent] = Agent
    name = "scenario only"

    def __init__(self) -> None:
        super().__init__(capabilities=ReferenceAdapter().handshake().capabilities - HIDDEN)

    def handshake(self) -> Handshake:
        real = super().handshake()
        info = type(real.implementation)(name=f"faux: {self.name}", language="python")
        return Handshake(implementation=info, capabilities=real.capabilities)

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "scenario.run":
            if uses_side(args):
                raise ImplementationError("DSH_UNSUPPORTED_OPERATION", "no side sessions here")
            return scenario.run(args, decode_hostile, self.agent)
        return super().call(op, args)


class BlockKeepsContexts(Agent):
    """A block still writes the blocked message's separate contexts (INBOX-011)."""

    def _append(self, type: str, data: Any) -> Event:
        event = super()._append(type, data)
        if type == "prompt/blocked" and self._turn is not None:
            for context in self._turn.record.contexts:
                if context.get("placement") != "prompt-prefix":
                    body = {"content": context["content"], "source": context["source"]}
                    super()._append("context/message", body)
        return event


class BlockWritesThePrompt(Agent):
    """A block still writes the blocked prompt as a user message, its contexts baked or
    separate as admission would, and logs no block event (INBOX-011, issue 45 item 4): a
    check that finds blocks by the host's own block event sees none."""

    def _append(self, type: str, data: Any) -> Event:
        if type == "prompt/blocked" and self._turn is not None:
            record = self._turn.record
            prepared = self.place_prompt(record.content, record.source, record.contexts or ())
            event = super()._append("user/message", prepared.data)
            for context in prepared.separate:
                super()._append("context/message", context)
            return event
        return super()._append(type, data)


class LateSteeringLosesContexts(Agent):
    """Late steering is re-queued without its contexts (INBOX-020)."""

    def _flush(self) -> str:
        self.steering = type(self.steering)(type(r)(r.content, r.source, ()) for r in self.steering)
        return super()._flush()


class CancelLeaksContexts(Agent):
    """cancel() drops the messages but injects their separate contexts (INBOX-021)."""

    def cancel(self, cause: object = None) -> None:
        dropped = [c for r in (*self.queued, *self.steering) for c in r.contexts]
        super().cancel(cause)
        for context in dropped:
            if context.get("placement") != "prompt-prefix":
                self.inject(thaw(context["content"]), thaw(context["source"]))


def _two_delimiters(
    content: object, source: object, contexts: Sequence[Mapping[str, Any]]
) -> PreparedPrompt:
    prepared = prepare_prompt_message(content, source, contexts)
    if "envelope" not in prepared.data:
        return prepared
    data = thaw(prepared.data)
    data["content"] = [DELIM, *data["content"]]
    return PreparedPrompt(data, prepared.separate)


class TwoDelimiters(Agent):
    """A prefixed prompt gets a second delimiter in front of its prefix blocks (ENV-053)."""

    place_prompt = staticmethod(_two_delimiters)


class StaleRequests(Agent):
    """The model is sent the surface minus its newest message (ENV-058)."""

    def _boundary(self) -> tuple[Any, ...]:
        return super()._boundary()[:-1]


def _adapter(agent: type[Agent], name: str) -> ScenarioOnly:
    adapter = ScenarioOnly()
    adapter.agent = agent
    adapter.name = name
    return adapter


def release_placement() -> ScenarioOnly:
    return _adapter(ReleaseAgent, "release placement")


def block_keeps_contexts() -> ScenarioOnly:
    return _adapter(BlockKeepsContexts, "block keeps contexts")


def block_writes_the_prompt() -> ScenarioOnly:
    return _adapter(BlockWritesThePrompt, "block writes the prompt")


def late_steering_loses_contexts() -> ScenarioOnly:
    return _adapter(LateSteeringLosesContexts, "late steering loses contexts")


def cancel_leaks_contexts() -> ScenarioOnly:
    return _adapter(CancelLeaksContexts, "cancel leaks contexts")


def two_delimiters() -> ScenarioOnly:
    return _adapter(TwoDelimiters, "two delimiters")


def stale_requests() -> ScenarioOnly:
    return _adapter(StaleRequests, "stale requests")


def reference() -> ScenarioOnly:
    return _adapter(Agent, "reference, scenario only")
