"""Scenario-only implementations for the observation checks (conformance/test_scenario_observed.py,
conformance/test_scenario_partial.py).

Each is the reference model with one rule broken -- or one allowed difference -- exposed the
way a real host is: ``scenario.run`` on its own loop, no micro-step ``agent`` capability.
tests/test_scenario_observed_kits.py runs the scenario tests against each through the CLI.
Selectable as ``python:faux_scenario:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from unittest import mock

from faux_inbox import ScenarioOnly

from dsh_conformance.adapters.contract import Handshake
from dsh_conformance.adapters.reference import ReferenceAdapter, agent_ops
from dsh_conformance.adapters.reference.agent_ops import decode_hostile
from dsh_conformance.model import driver as driver_module
from dsh_conformance.model import jsstr, scenario
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict, freeze, thaw
from dsh_conformance.model.inbox import InboxRecord
from dsh_conformance.model.placement import PreparedPrompt, prepare_prompt_message
from dsh_conformance.model.prompt_submit import Allow, Decision, Listener, run_waterfall
from dsh_conformance.model.session import Event
from dsh_conformance.model.turn import Phase


class KitAdapter(ScenarioOnly):
    """ScenarioOnly with a replaceable host (runner) as well as agent."""

    runner: type[scenario.Runner] = scenario.Runner

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "scenario.run":
            return scenario.run(args, decode_hostile, self.agent, self.runner)
        return super().call(op, args)


# --- broken ---------------------------------------------------------------------------------


class PrefixEcho(Agent):
    """A prefixed prompt is followed by a message event of a new type holding its prefix,
    on the surface (ENV-052; a log-only record of it would be the host's own, D-444)."""

    def _append(self, type: str, data: Any) -> Event:
        event = super()._append(type, data)
        if type == "user/message" and "envelope" in data:
            super()._append("prompt/prefix", {"envelope": data["envelope"]})
        return event


class PrefixEchoHost(KitAdapter):
    """Reports PrefixEcho's ``prompt/prefix`` events on the surface (the model's log
    validator refuses a surfaceOp on a type it does not know)."""

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        out = super().call(op, args)
        if op == "scenario.run":
            for event in out["log"]["events"]:
                if event["type"] == "prompt/prefix":
                    event["surfaceOp"] = "append"
        return out


class BakedBeforeSubmit(Agent):
    """prompt-submit is shown the prompt with its prefix already baked (ENV-061)."""

    def _submit(self) -> str:
        name = super()._submit()
        if self._submissions and self._turn is not None:
            last = dict(self._submissions[-1])
            prefix = [
                c for c in self._turn.record.contexts if c.get("placement") == "prompt-prefix"
            ]
            if prefix:
                prepared = prepare_prompt_message(last["content"], last["source"], prefix)
                last["content"] = thaw(prepared.data["content"])
                self._submissions[-1] = last
        return name


class RewriteDisplayStale(Agent):
    """A rewrite reaches the model content, but the display keeps the original (ENV-062)."""

    def place_prompt(  # type: ignore[override]
        self, content: object, source: object, contexts: Sequence[Mapping[str, Any]]
    ) -> PreparedPrompt:
        prepared = prepare_prompt_message(content, source, contexts)
        if "envelope" not in prepared.data or self._turn is None:
            return prepared
        data = thaw(prepared.data)
        data["envelope"]["displayContent"] = thaw(self._turn.record.content)
        return PreparedPrompt(freeze(data), prepared.separate)


class SourceUnresolved(Agent):
    """agent/queued reports the source as given (none), not the resolved one (INBOX-001)."""

    def _announce(self, record: InboxRecord, *, steering: bool) -> None:
        self._notify(
            "agent/queued", content=record.content, source=None, contexts=record.contexts,
            steering=steering,
        )  # fmt: skip


class QueuedWithoutContexts(Agent):
    """agent/queued omits the record's contexts (INBOX-004)."""

    def _announce(self, record: InboxRecord, *, steering: bool) -> None:
        self._notify(
            "agent/queued", content=record.content, source=record.source, contexts=(),
            steering=steering,
        )  # fmt: skip


class InjectRefusesMeta(Agent):
    """inject() rejects model-hidden meta (INBOX-006)."""

    def inject(
        self, content: object, source: object = None, meta: object = jsstr.UNDEFINED
    ) -> None:
        if meta is not jsstr.UNDEFINED:
            raise DshError(ErrorCode.INVALID_ARGUMENT, "inject takes no meta")
        super().inject(content, source)


class _RewrittenListeners(Agent):
    """A host that changes each listener the script installs (``rewrite``) before use."""

    @property  # type: ignore[override]
    def listeners(self) -> list[Listener]:
        return self._kit_listeners

    @listeners.setter
    def listeners(self, value: list[Listener]) -> None:
        self._kit_listeners = [self.rewrite(x) for x in value]

    def rewrite(self, listener: Listener) -> Listener:
        raise NotImplementedError


class AllowNotAuthoritative(_RewrittenListeners):
    """An allow returned without next() still gets the record's own contexts (INBOX-012)."""

    def rewrite(self, listener: Listener) -> Listener:
        if listener.kind == "allow":
            return Listener(listener.event, FrozenDict({"kind": "pass"}))
        return listener


class ExpandsMentions(Agent):
    """The core agent parses session URIs in sent content into a context (INBOX-030)."""

    def send(
        self, content: object, source: object = None, contexts: Sequence[object] | None = None
    ) -> None:
        if "dsh-session:" in repr(content):
            found = {
                "source": {"kind": "plugin", "plugin": "mentions"},
                "content": [{"type": "text", "text": "expanded"}],
            }
            contexts = [*(contexts or ()), found]
        super().send(content, source, contexts)


def _no_meta(contexts: Sequence[object] | None) -> list[object] | None:
    if contexts is None:
        return None
    return [
        {k: v for k, v in c.items() if k != "meta"} if isinstance(c, Mapping) else c
        for c in contexts
    ]


class StripsContextMeta(Agent):
    """send() and steer() drop each context's meta (INBOX-032)."""

    def send(
        self, content: object, source: object = None, contexts: Sequence[object] | None = None
    ) -> None:
        super().send(content, source, _no_meta(contexts))

    def steer(
        self, content: object, source: object = None, contexts: Sequence[object] | None = None
    ) -> None:
        super().steer(content, source, _no_meta(contexts))


class SteeringSubmits(Agent):
    """Drained steering is also dispatched to prompt-submit (INBOX-034)."""

    def _drain_steering(self, turn: Any) -> bool:
        for record in self.steering:
            self._submissions.append(
                {
                    "turn": turn.number,
                    "content": thaw(record.content),
                    "source": thaw(record.source),
                }
            )
        return super()._drain_steering(turn)


class PreparingHostInjects(scenario.Runner):
    """The host's preparation writes the snapshot into the agent (INBOX-035)."""

    def prepare(self, fields: Mapping[str, Any]) -> dict[str, Any]:
        prepared = super().prepare(fields)
        for context in prepared["contexts"]:
            self.agent.inject(context["content"], context["source"])
        return prepared


class PartialAsMessage(Agent):
    """An interrupted stream is logged as an assistant message with its partial text (PROJ-004)."""

    def _interrupt(self, turn: Any) -> None:
        pending = getattr(turn, "pending", None)
        if isinstance(pending, Mapping) and "partial" in pending and turn.step_open:
            body = {
                "turn": turn.number,
                "step": turn.step,
                "content": [{"type": "text", "text": pending["partial"]}],
            }
            self.log.append("assistant/message", body)
        super()._interrupt(turn)


# --- allowed differences --------------------------------------------------------------------


class ContextsAppended(_RewrittenListeners):
    """add-contexts appends by default (the note names no order for listener contexts)."""

    def rewrite(self, listener: Listener) -> Listener:
        if listener.kind == "add-contexts" and "position" not in listener.spec:
            return Listener(
                listener.event, FrozenDict({**thaw(listener.spec), "position": "append"})
            )
        return listener


class InjectMetaNotLogged(Agent):
    """inject() keeps its meta out of the log too (the note only says model-hidden)."""

    def inject(
        self, content: object, source: object = None, meta: object = jsstr.UNDEFINED
    ) -> None:
        super().inject(content, source)


class UnfinishedLeavesNothing(Agent):
    """An unfinished stream leaves no chunks at all (a host that logs a stream only once it
    finishes; the note requires no chunk records)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        take = self.model.next

        def without_partial() -> FrozenDict:
            spec = take()
            return FrozenDict({k: v for k, v in spec.items() if k != "partial"})

        self.model.next = without_partial  # type: ignore[method-assign]


class HostLogEvents(Agent):
    """The host logs an event type of its own after each reply (unrelated to placement)."""

    def _append(self, type: str, data: Any) -> Event:
        event = super()._append(type, data)
        if type == "step/end":
            super()._append("host/usage", {"tokens": 1})
        return event


class HostTelemetry(Agent):
    """The host logs records of its own: one right after each prompt event and one after
    each turn, holding what the model was asked (the baked prefix included) -- log-only
    records of a type of its own, which the seed checks set aside (D-444)."""

    def _append(self, type: str, data: Any) -> Event:
        event = super()._append(type, data)
        if type in {"user/message", "steering/message"}:
            super()._append("host/prompt-seen", {"content": thaw(data["content"])})
        elif type == "turn/end":
            asked = [thaw(e.data["content"]) for e in self.log.events if e.type == "user/message"]
            super()._append("host/turn-usage", {"turn": data["turn"], "asked": asked[-1:]})
        return event


class AllowKeepsContexts(Agent):
    """An ``allow`` without ``additionalContexts`` keeps the record's own contexts (the
    other reading of an absent field, D-445); one that names contexts carries those."""

    def _submit(self) -> str:
        def keeping(
            listeners: Sequence[Listener], default: Decision, on_invoke: Callable[..., None]
        ) -> Decision:
            kept = default.additional_contexts if isinstance(default, Allow) else None
            if kept is None:
                return run_waterfall(listeners, default, on_invoke)
            changed = [
                Listener(x.event, FrozenDict({**x.spec, "additionalContexts": kept}))
                if x.kind == "allow" and "additionalContexts" not in x.spec
                else x
                for x in listeners
            ]
            originals = dict(zip(map(id, changed), listeners, strict=True))
            return run_waterfall(changed, default, lambda x: on_invoke(originals[id(x)]))

        with mock.patch.object(driver_module, "run_waterfall", keeping):
            return super()._submit()


class TurnEndLater(scenario.Runner):
    """turnEnd steps run one loop step later (a real store's feed defers them: docs/scenario.md)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.deferred: list[tuple[Any, ...]] = []

    def fire(self, trigger: tuple[Any, ...]) -> None:
        if trigger[0] == "turnEnd" and trigger not in self.deferred:
            self.deferred.append(trigger)
            return
        super().fire(trigger)

    def _release(self, due: list[tuple[Any, ...]]) -> None:
        for trigger in due:
            super().fire(trigger)
            self.scan()

    def drive(self) -> None:
        agent = self.agent
        while True:
            due, self.deferred = self.deferred, []
            call = agent.next_call
            if agent.phase is Phase.SUBMIT:
                super().fire(("submit", agent.submission_count + 1))
            elif call is not None:
                super().fire(("toolCall", call["id"]))
            agent.listeners = self.listeners()
            before = agent.request_count
            stepped = agent.step()
            if stepped is not None and agent.request_count > before:
                super().fire(("request", agent.request_count))
            self.scan()
            self._release(due)  # the turn's end, one loop step late
            if stepped is None and not due and not self.deferred:
                return


def _kit(
    name: str, agent: type[Agent] = Agent, runner: type[scenario.Runner] = scenario.Runner
) -> KitAdapter:
    adapter = KitAdapter()
    adapter.agent = agent
    adapter.runner = runner
    adapter.name = name
    return adapter


def prefix_echo() -> KitAdapter:
    adapter = PrefixEchoHost()
    adapter.agent, adapter.name = PrefixEcho, "prefix echo"
    return adapter


def baked_before_submit() -> KitAdapter:
    return _kit("baked before submit", BakedBeforeSubmit)


def rewrite_display_stale() -> KitAdapter:
    return _kit("rewrite display stale", RewriteDisplayStale)


def source_unresolved() -> KitAdapter:
    return _kit("source unresolved", SourceUnresolved)


def queued_without_contexts() -> KitAdapter:
    return _kit("queued without contexts", QueuedWithoutContexts)


def inject_refuses_meta() -> KitAdapter:
    return _kit("inject refuses meta", InjectRefusesMeta)


def allow_not_authoritative() -> KitAdapter:
    return _kit("allow not authoritative", AllowNotAuthoritative)


def expands_mentions() -> KitAdapter:
    return _kit("expands mentions", ExpandsMentions)


def strips_context_meta() -> KitAdapter:
    return _kit("strips context meta", StripsContextMeta)


def steering_submits() -> KitAdapter:
    return _kit("steering submits", SteeringSubmits)


def preparing_host_injects() -> KitAdapter:
    return _kit("preparing host injects", runner=PreparingHostInjects)


def partial_as_message() -> KitAdapter:
    return _kit("partial as message", PartialAsMessage)


def contexts_appended() -> KitAdapter:
    return _kit("contexts appended", ContextsAppended)


def inject_meta_not_logged() -> KitAdapter:
    return _kit("inject meta not logged", InjectMetaNotLogged)


def unfinished_leaves_nothing() -> KitAdapter:
    return _kit("unfinished stream leaves nothing", UnfinishedLeavesNothing)


def host_log_events() -> KitAdapter:
    return _kit("host log events", HostLogEvents)


def host_telemetry() -> KitAdapter:
    return _kit("host telemetry", HostTelemetry)


def allow_keeps_contexts() -> KitAdapter:
    return _kit("allow keeps contexts", AllowKeepsContexts)


class AllowKeepsContextsEverywhere(ReferenceAdapter):
    """The reference adapter, micro-step ``agent`` included, whose agents keep the record's
    contexts after an allow without ``additionalContexts`` (D-445)."""

    def handshake(self) -> Handshake:
        real = super().handshake()
        info = type(real.implementation)(name="faux: allow keeps contexts", language="python")
        return Handshake(implementation=info, capabilities=real.capabilities)

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        if op == "scenario.run":
            return scenario.run(args, decode_hostile, AllowKeepsContexts)
        with mock.patch.object(agent_ops, "Agent", AllowKeepsContexts):
            return super().call(op, args)


def allow_keeps_contexts_everywhere() -> AllowKeepsContextsEverywhere:
    return AllowKeepsContextsEverywhere()


def turn_end_later() -> KitAdapter:
    return _kit("turnEnd one step later", runner=TurnEndLater)
