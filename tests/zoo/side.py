"""Side-session defects: fork, advisor framing and merge-back (SIDE-*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference.agent_ops import agents
from dsh_conformance.model import agent_core as core_module
from dsh_conformance.model import jsstr, side, side_fork, side_merge
from dsh_conformance.model.errors import ErrorCode
from dsh_conformance.model.frozen import FrozenDict, thaw
from dsh_conformance.model.session import Event
from dsh_conformance.model.side_framing import FRAMING_TEXT
from dsh_conformance.model.side_gate import GatedAgent
from dsh_conformance.model.side_merge import HANDBACK_HEADING, HANDBACK_KIND
from zoo import Area
from zoo._base import Broken, Patch

#: The stateful machine is left out (see zoo.placement).
AREA = Area(capabilities=["side"], requirements=["SIDE-*"], keyword="not stateful")

_merged_text = side.merged_text
_frame = side._frame


class ForkIncludesOpenTurn(Broken):
    name = "fork copies an open turn"
    invariant = "Seeds the child with the parent's whole log, incomplete turn included."
    kills = frozenset({"SIDE-004"})
    # Where the seed accepts either reading of a numbering gap (D-256), the member still
    # breaks the profile's fork point (SIDE-050), seen once every check runs.
    collateral_ok = frozenset({"SIDE-050", "SIDE-052"})

    def patches(self) -> tuple[Patch, ...]:
        def length(events: Sequence[Event]) -> int:
            return len(events)

        return ((side_fork, "balanced_prefix_length", length),)


class FramingInSystemPrompt(Broken):
    name = "framing written to the system prompt"
    invariant = (
        "Puts the advisor framing into the child's system prompt instead of one context/message."
    )
    kills = frozenset({"SIDE-008"})
    collateral_ok = frozenset(
        {"SIDE-007", "SIDE-024", "SIDE-028", "SIDE-054", "SIDE-066"}
    )  # the same defect breaks these too (no framing context/message at all)

    def patches(self) -> tuple[Patch, ...]:
        def child(header: Any, seed: Any, options: Any, deny: Any) -> GatedAgent:
            framed = attrs.evolve(
                options, persona=(options.persona + "\n\n" + FRAMING_TEXT).strip()
            )
            return GatedAgent(header, seed, framed, deny)

        return ((side, "GatedAgent", child), (side, "_frame", lambda agent, parent: None))


class FramingUserSourced(Broken):
    name = "framing as a user message"
    invariant = (
        "Injects the advisor framing with a user source instead of the sidechat plugin source."
    )
    #: SIDE-007: "inject one plugin-sourced context/message"; SIDE-024 restates the head.
    kills = frozenset({"SIDE-007"})
    collateral_ok = frozenset({"SIDE-024", "SIDE-028"})

    def _framing(self, op: str, args: Mapping[str, Any]) -> Any:
        with self._extra(((side, "SIDECHAT_SOURCE", FrozenDict({"kind": "user"})),)):
            return self.reference.call(op, args)

    def op_side_fork(self, args: Mapping[str, Any]) -> Any:
        return self._framing("side.fork", args)

    def op_side_frame(self, args: Mapping[str, Any]) -> Any:
        return self._framing("side.frame", args)


class MergeNotCapped(Broken):
    name = "merge-back not capped"
    invariant = "Merges a model handback whole, however long, instead of truncating it to the cap."
    kills = frozenset({"SIDE-031"})
    collateral_ok = frozenset({"SIDE-055"})

    def patches(self) -> tuple[Patch, ...]:
        def merged(handback: str, cap: int, *, explicit: bool) -> Any:
            return _merged_text(handback, cap if explicit else 10**12, explicit=explicit)

        return ((side, "merged_text", merged),)


class MergeWrongSource(Broken):
    name = "merge-back not sourced sidechat"
    invariant = (
        "Injects the handback into the parent with source plugin `side-session`, not `sidechat`."
    )
    kills = frozenset({"SIDE-025"})
    collateral_ok = frozenset(
        {"SIDE-010", "SIDE-031", "SIDE-055", "SIDE-056", "SIDE-060"}
    )  # the same defect breaks these too

    def op_side_mergeBack(self, args: Mapping[str, Any]) -> Any:
        source = FrozenDict({"kind": "plugin", "plugin": "side-session"})
        with self._extra(((side, "SIDECHAT_SOURCE", source),)):
            return self.reference.call("side.mergeBack", args)


class ForkTouchesParent(Broken):
    name = "fork writes to the parent"
    invariant = (
        "Records the fork in the parent's log (an so is "
        "injected note), the source not left untouched."
    )
    kills = frozenset({"SIDE-020"})
    collateral_ok = frozenset({"SIDE-025", "SIDE-066"})

    def op_side_fork(self, args: Mapping[str, Any]) -> Any:
        out = self.reference.call("side.fork", args)
        self.reference.call(
            "agent.inject",
            {
                "agent": out["parentSession"],
                "content": [{"type": "text", "text": f"forked {out['child']}"}],
                "source": {"kind": "plugin", "plugin": "sidechat"},
            },
        )
        return out


class ForeignMerge(Broken):
    name = "merge from any session"
    invariant = "Merges a handback from a side session into a parent it was not forked from."
    kills = frozenset({"SIDE-061"})

    def patches(self) -> tuple[Patch, ...]:
        def merge(agents: Any, parent_id: object, child_id: object, **kw: Any) -> Any:
            child = side.lookup(agents, child_id)
            real = child.header.parent_session
            if real is None or real == parent_id or not isinstance(parent_id, str):
                return _merge(agents, parent_id, child_id, **kw)
            parent = side.lookup(agents, parent_id)
            header = child.header
            child.log.header = attrs.evolve(header, parent_session=parent.id)
            try:
                return _merge(agents, parent_id, child_id, **kw)
            finally:
                child.log.header = header

        return ((side, "merge_back", merge),)


_merge = side.merge_back


class ExplicitHandbackUncapped(Broken):
    name = "explicit handback merged whole"
    invariant = (
        "Merges a handback text given to side.mergeBack whole, however long, ignoring the cap."
    )
    kills = frozenset({"SIDE-031"})
    collateral_ok = frozenset({"SIDE-057"})

    def op_side_mergeBack(self, args: Mapping[str, Any]) -> Any:
        text = args.get("text")
        if not isinstance(text, str):
            return self.reference.call("side.mergeBack", args)
        whole = len(jsstr.utf8_encode(HANDBACK_HEADING + text))
        return self.reference.call("side.mergeBack", {**args, "cap": max(whole, 256)})


# --- issue 41: one member per seed 004 MUST no other member breaks --------------------------


class ChildOnTheParentsSession(Broken):
    name = "child talks under the parent's session"
    invariant = (
        "Sends the side session's model requests under the parent's session id (one "
        "provider session for the family), so the child is not attached to its own agent."
    )
    kills = frozenset({"SIDE-003"})
    # The child's requests carry the other agent's id (SIDE-026's note) and are no longer
    # its own requests (SIDE-051): the same defect.
    collateral_ok = frozenset({"SIDE-026", "SIDE-051"})

    def patches(self) -> tuple[Patch, ...]:
        return ((side, "GatedAgent", _SharedSession),)


class _SharedSession(GatedAgent):
    """A child whose model requests go out under its parent's session."""

    @property
    def requests(self) -> list[dict[str, Any]]:
        parent = self.header.parent_session
        return [r | {"sessionId": parent or r["sessionId"]} for r in super().requests]


class NoLineageForAnEmptySeed(Broken):
    name = "no lineage when nothing is copied"
    invariant = (
        "Stamps parentSession and seedLength only when the fork copied events "
        "(`if (seed.length) meta = {...}`), so a child of a parent with no completed turn "
        "carries no lineage."
    )
    kills = frozenset({"SIDE-005"})
    collateral_ok = frozenset({"SIDE-052"})  # the profile's sentence for the empty prefix

    def patches(self) -> tuple[Patch, ...]:
        def plan(parent: Any, events: Any, child_id: str) -> side_fork.ForkPlan:
            out = _plan_fork(parent, events, child_id)
            if out.seed_length:
                return out
            bare = attrs.evolve(out.header, parent_session=None, seed_length=None)
            return attrs.evolve(out, header=bare)

        return ((side, "plan_fork", plan),)


_plan_fork = side_fork.plan_fork


class ChildOutsideTheAgentService(Broken):
    name = "side sessions in a registry of their own"
    invariant = (
        "Keeps side sessions in the plugin's own registry: the side ops drive them, but the "
        "core `agent.state` does not know them (a new service beside ctx.agents)."
    )
    kills = frozenset({"SIDE-006"})
    # SIDE-015's check reads the child's status with agent.state to see it is still live.
    collateral_ok = frozenset({"SIDE-015"})

    def op_agent_state(self, args: Mapping[str, Any]) -> Any:
        found = _agent(self, args.get("agent"))
        if found is not None and found.header.parent_session is not None:
            raise ImplementationError(ErrorCode.AGENT_NOT_FOUND, "no agent " + repr(found.id))
        return self.reference.call("agent.state", args)


def _agent(member: Broken, agent_id: object) -> Any:
    """The live agent *agent_id* of *member*'s reference model, or None."""
    found = agents(member.reference.state).get(agent_id) if isinstance(agent_id, str) else None
    return found


class HandbackNeverAsked(Broken):
    name = "handback never asked"
    invariant = (
        "Never sends the child the handback request: merge-back condenses the child's "
        "latest answer, whatever it was asked."
    )
    kills = frozenset({"SIDE-009"})
    # The note merged is not the requested one: its meta, heading and the profile's
    # request-and-answer rule are wrong with it.
    collateral_ok = frozenset({"SIDE-055", "SIDE-056", "SIDE-058", "SIDE-060"})

    def patches(self) -> tuple[Patch, ...]:
        def ask(registry: Any, child_id: object, cap: object = None) -> None:
            side.validate_cap(cap)
            child = side.lookup(registry, child_id)
            side.seed_length_of(child)
            side._live(child)

        def latest_answer(events: Sequence[Event], seed_length: int) -> str | None:
            texts = [side_merge._text_of(e) for e in events if e.type == "assistant/message"]
            return next((t for t in reversed(texts) if t), None)

        return ((side, "ask_handback", ask), (side, "find_handback", latest_answer))


class HandbackNotReplayed(Broken):
    name = "handback shown, not sent to the model"
    invariant = (
        "Logs the merge-back context but leaves handbacks out of the parent's model "
        "requests (the host renders them for the user only)."
    )
    kills = frozenset({"SIDE-010"})
    collateral_ok = frozenset({"SIDE-090"})  # the profile's byte-exact replay, restated

    def patches(self) -> tuple[Patch, ...]:
        def derive(event: Event) -> dict[str, Any] | None:
            data: Any = event.data
            meta = data.get("meta") if isinstance(data, Mapping) else None
            handback = isinstance(meta, Mapping) and meta.get("kind") == HANDBACK_KIND
            if event.type == "context/message" and handback:
                return None
            return _derive_message(event)

        return ((core_module, "derive_message", derive),)


_derive_message = core_module.derive_message


class ChildDisposedWithTheParent(Broken):
    name = "child disposed with its parent"
    invariant = "Disposes of every side session of a parent when the parent is disposed."
    kills = frozenset({"SIDE-015"})
    collateral_ok = frozenset({"SIDE-063"})  # the profile's root-agent rule, restated

    def op_agent_dispose(self, args: Mapping[str, Any]) -> Any:
        out = self.reference.call("agent.dispose", args)
        registry = agents(self.reference.state)
        for agent in list(registry.values()):
            if agent.header.parent_session == args.get("agent"):
                agent.dispose()
        return out


class AdvisorNoteInTheSystemPrompt(Broken):
    name = "advisor note added to the child's system prompt"
    invariant = (
        "Frames the child with its context and also appends a 'side session' line to the "
        "child's system prompt."
    )
    kills = frozenset({"SIDE-017"})
    # The same change breaks the byte-identical prompt (SIDE-008) and the profile's
    # identical options (SIDE-064).
    collateral_ok = frozenset({"SIDE-008", "SIDE-064"})

    def patches(self) -> tuple[Patch, ...]:
        def child(header: Any, seed: Any, options: Any, deny: Any) -> GatedAgent:
            line = "You are in a side session: answer, do not act."
            noted = attrs.evolve(options, persona=(options.persona + "\n\n" + line).strip())
            return GatedAgent(header, seed, noted, deny)

        return ((side, "GatedAgent", child),)


class MergeLogsSidechatEvent(Broken):
    name = "merge-back logs a sidechat event"
    invariant = "Logs a `sidechat/merged` event in the parent after each merge-back context."
    kills = frozenset({"SIDE-019"})
    # During a tool batch the event is logged where the profile puts the step's end.
    collateral_ok = frozenset({"SIDE-059"})

    def patches(self) -> tuple[Patch, ...]:
        def merge(registry: Any, parent_id: object, child_id: object, **kw: Any) -> Any:
            out = _merge(registry, parent_id, child_id, **kw)
            parent = side.lookup(registry, parent_id)
            parent.log.append("sidechat/merged", FrozenDict({"child": child_id}))
            return out

        return ((side, "merge_back", merge),)


class FramedTwice(Broken):
    name = "framing in two contexts"
    invariant = "Frames the child with two sidechat contexts, one per concern of the framing."
    kills = frozenset({"SIDE-024"})
    collateral_ok = frozenset({"SIDE-028", "SIDE-053", "SIDE-054"})

    def patches(self) -> tuple[Patch, ...]:
        def frame(agent: Any, parent_id: str) -> int:
            seq = _frame(agent, parent_id)
            agent.inject(
                [{"type": "text", "text": "Keep your answers short."}],
                thaw(side.SIDECHAT_SOURCE),
                thaw(side.framing_meta(parent_id)),
            )
            return seq

        return ((side, "_frame", frame),)


class ChildPromptsEchoed(Broken):
    name = "child prompts echoed to the parent"
    invariant = (
        "Mirrors every prompt sent to a side session into its parent's log as a user context."
    )
    kills = frozenset({"SIDE-026"})
    collateral_ok = frozenset({"SIDE-065"})  # the profile's no-other-agent rule, restated

    def op_agent_send(self, args: Mapping[str, Any]) -> Any:
        out = self.reference.call("agent.send", args)
        child = _agent(self, args.get("agent"))
        parent = _agent(self, child.header.parent_session) if child is not None else None
        if parent is not None and parent.status != "disposed":
            parent.inject(args["content"])
        return out


class UncompactedHistoryToTheChild(Broken):
    name = "child told the compacted-away turns"
    invariant = (
        "After framing, injects the messages a compaction replaced into the child, so the "
        "advisor sees the parent's full history rather than its compacted view."
    )
    kills = frozenset({"SIDE-029"})

    def patches(self) -> tuple[Patch, ...]:
        def frame(agent: Any, parent_id: str) -> int:
            seq = _frame(agent, parent_id)
            shown = {e.seq for e in agent.log.surface()}
            for event in agent.events[: agent.header.seed_length or 0]:
                data: Any = event.data
                if event.seq in shown or event.type not in ("user/message", "assistant/message"):
                    continue
                content = [b for b in thaw(data.get("content", ())) if b.get("type") == "text"]
                if content:
                    agent.inject(content, {"kind": "plugin", "plugin": "side-history"})
            return seq

        return ((side, "_frame", frame),)


MEMBERS = (
    ForkIncludesOpenTurn,
    FramingInSystemPrompt,
    FramingUserSourced,
    MergeNotCapped,
    MergeWrongSource,
    ForkTouchesParent,
    ForeignMerge,
    ExplicitHandbackUncapped,
    ChildOnTheParentsSession,
    NoLineageForAnEmptySeed,
    ChildOutsideTheAgentService,
    HandbackNeverAsked,
    HandbackNotReplayed,
    ChildDisposedWithTheParent,
    AdvisorNoteInTheSystemPrompt,
    MergeLogsSidechatEvent,
    FramedTwice,
    ChildPromptsEchoed,
    UncompactedHistoryToTheChild,
)
