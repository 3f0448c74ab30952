"""Inbox defects: message ownership, admission and the caller verbs (INBOX-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference.agent_ops import decode_hostile, get_agent
from dsh_conformance.model import driver as driver_module
from dsh_conformance.model import inbox as inbox_module
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.inbox import accept
from dsh_conformance.model.prompt_submit import Allow
from zoo import Area
from zoo._base import Broken, Patch

#: The stateful machines are left out (see zoo.placement).
AREA = Area(capabilities=["agent"], requirements=["INBOX-*"], keyword="not state_machine")

_waterfall = driver_module.run_waterfall
_append = Agent._append
_inject = Agent.inject
_drain = Agent._drain_steering
_snapshot = inbox_module.snapshot


class QueuedWithoutContexts(Broken):
    name = "agent/queued without contexts"
    invariant = "Reports a queued message on agent/queued without its attached contexts."
    kills = frozenset({"INBOX-004"})
    collateral_ok = frozenset({"INBOX-003", "INBOX-032"})

    def patches(self) -> tuple[Patch, ...]:
        def announce(agent: Agent, record: Any, *, steering: bool) -> None:
            agent._notify(
                "agent/queued", content=record.content, source=record.source, steering=steering
            )

        return ((Agent, "_announce", announce),)


class SteerWhileIdleIsSteering(Broken):
    name = "steer() on an idle agent stays steering"
    invariant = "Keeps steer() as steering even when the agent is not running, instead of a send()."
    kills = frozenset({"INBOX-005"})
    collateral_ok = frozenset({"INBOX-032"})

    def patches(self) -> tuple[Patch, ...]:
        def steer(
            agent: Agent, content: object, source: object = None, contexts: Any = None
        ) -> None:
            agent._check_live()
            record = accept(content, source, contexts)
            agent.steering.append(record)
            agent._announce(record, steering=True)

        return ((Agent, "steer", steer),)


class InjectDropsMeta(Broken):
    name = "inject() drops meta"
    invariant = "Writes an injected context/message without the model-hidden meta it was given."
    kills = frozenset({"INBOX-006"})
    collateral_ok = frozenset({"INBOX-002"})  # a dropped meta is never validated either

    def patches(self) -> tuple[Patch, ...]:
        def inject(
            agent: Agent, content: object, source: object = None, meta: object = None
        ) -> None:
            _inject(agent, content, source)

        return ((Agent, "inject", inject),)


class InjectTakesContexts(Broken):
    name = "inject() accepts contexts"
    invariant = "Accepts (and ignores) contexts passed to inject() instead of rejecting them."
    kills = frozenset({"INBOX-006"})

    def op_agent_inject(self, args: Mapping[str, Any]) -> Any:
        return self.reference.call(
            "agent.inject", {k: v for k, v in args.items() if k != "contexts"}
        )


class ContextsNotOffered(Broken):
    name = "attached contexts not the default"
    invariant = (
        "Starts prompt-submit with no additional contexts, so a message's contexts are lost."
    )
    kills = frozenset({"INBOX-010"})
    collateral_ok = frozenset(
        {"INBOX-003", "INBOX-012", "INBOX-020"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        def waterfall(listeners: Any, default: Any, invoked: Any) -> Any:
            return _waterfall(listeners, Allow(default.content, None), invoked)

        return ((driver_module, "run_waterfall", waterfall),)


class BlockWritesPrompt(Broken):
    name = "blocked prompt still written"
    invariant = "Writes the user message to the log before recording that prompt-submit blocked it."
    kills = frozenset({"INBOX-011"})

    def patches(self) -> tuple[Patch, ...]:
        def append(agent: Agent, type: str, data: Any) -> Any:
            if type == "prompt/blocked":
                _append(
                    agent, "user/message", {"content": data["content"], "source": data["source"]}
                )
            return _append(agent, type, data)

        return ((Agent, "_append", append),)


class BlockWritesPromptAndContexts(Broken):
    name = "blocked prompt written with its contexts, no block event"
    invariant = (
        "Writes a blocked prompt as admission would, its contexts baked or separate, and "
        "logs no block (issue 45 item 4)."
    )
    kills = frozenset({"INBOX-011"})
    collateral_ok = frozenset({"INBOX-013"})  # no prompt/blocked event either

    def patches(self) -> tuple[Patch, ...]:
        def append(agent: Agent, type: str, data: Any) -> Any:
            if type == "prompt/blocked" and agent._turn is not None:
                record = agent._turn.record
                placed = agent.place_prompt(record.content, record.source, record.contexts or ())
                event = _append(agent, "user/message", placed.data)
                for context in placed.separate:
                    _append(agent, "context/message", context)
                return event
            return _append(agent, type, data)

        return ((Agent, "_append", append),)


class RewriteIgnored(Broken):
    name = "allow rewrite ignored"
    invariant = (
        "Ignores the content a prompt-submit listener's allow returns; the original prompt is sent."
    )
    kills = frozenset({"INBOX-012"})
    collateral_ok = frozenset({"INBOX-010"})

    def patches(self) -> tuple[Patch, ...]:
        def waterfall(listeners: Any, default: Any, invoked: Any) -> Any:
            decision = _waterfall(listeners, default, invoked)
            if isinstance(decision, Allow):
                return Allow(None, decision.additional_contexts)
            return decision

        return ((driver_module, "run_waterfall", waterfall),)


class CancelKeepsSteering(Broken):
    name = "cancel keeps steering"
    invariant = "Drops queued messages on cancel but keeps pending steering (and its contexts)."
    kills = frozenset({"INBOX-022"})

    def patches(self) -> tuple[Patch, ...]:
        cancel = Agent.cancel

        def keep(agent: Agent, cause: object = None) -> None:
            steering = list(agent.steering)
            cancel(agent, cause)
            agent.steering.extend(steering)

        return ((Agent, "cancel", keep),)


class SteeringDispatchesPromptSubmit(Broken):
    name = "drained steering dispatches prompt-submit"
    invariant = "Runs drained steering through agent/prompt-submit like a queued message."
    kills = frozenset({"INBOX-034"})

    def patches(self) -> tuple[Patch, ...]:
        def drain(agent: Agent, turn: Any) -> bool:
            for record in agent.steering:
                agent._submissions.append(
                    {"turn": turn.number, "content": record.content, "source": record.source}
                )
                listeners = tuple(x for x in agent.listeners if x.event == "prompt-submit")
                _waterfall(listeners, Allow(None, record.contexts or None), agent._invoked)
            return _drain(agent, turn)

        return ((Agent, "_drain_steering", drain),)


class ShallowRecord(Broken):
    name = "shallow record"
    invariant = (
        "Copies a message's top-level record only: nested content and contexts stay the "
        "caller's objects, so a later change by the caller reaches the queue and the log."
    )
    kills = frozenset({"INBOX-001"})
    collateral_ok = frozenset({"INBOX-003"})  # the same ownership, restated

    def patches(self) -> tuple[Patch, ...]:
        def snapshot(value: object, path: str = "") -> Any:
            _snapshot(value, path)  # validates, as the model does

            def walk(item: object, depth: int) -> Any:
                if depth >= 2:
                    return item  # the caller's object, by reference
                if isinstance(item, Mapping):
                    return FrozenDict({k: walk(v, depth + 1) for k, v in item.items()})
                if isinstance(item, list | tuple):
                    return tuple(walk(v, depth + 1) for v in item)
                return item

            return walk(value, 0)

        return ((inbox_module, "snapshot", snapshot),)

    def _accept(self, method: str, args: Mapping[str, Any]) -> None:
        """An in-process host API: the caller's own objects reach the agent, undecoded."""
        try:
            agent = get_agent(self.reference.state, args)
        except DshError as exc:
            raise ImplementationError(exc.code, exc.message) from exc
        parts = []
        for name in ("content", "source", "contexts"):
            value = args.get(name)
            decoded = decode_hostile(value)
            # hostile markers decoded as the reference does; plain values kept by reference
            parts.append(value if repr(decoded) == repr(value) else decoded)
        if "content" not in args:
            self.reference.call(f"agent.{method}", args)  # the reference's own error
            return
        try:
            getattr(agent, method)(*parts)
        except DshError as exc:
            raise ImplementationError(exc.code, exc.message) from exc

    def op_agent_send(self, args: Mapping[str, Any]) -> Any:
        self._accept("send", args)

    def op_agent_steer(self, args: Mapping[str, Any]) -> Any:
        self._accept("steer", args)


MEMBERS = (
    QueuedWithoutContexts,
    SteerWhileIdleIsSteering,
    InjectDropsMeta,
    InjectTakesContexts,
    ContextsNotOffered,
    BlockWritesPrompt,
    BlockWritesPromptAndContexts,
    RewriteIgnored,
    CancelKeepsSteering,
    SteeringDispatchesPromptSubmit,
    ShallowRecord,
)
