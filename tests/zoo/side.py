"""Side-session defects: fork, advisor framing and merge-back (SIDE-*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from dsh_conformance.model import jsstr, side, side_fork
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.session import Event
from dsh_conformance.model.side_framing import FRAMING_TEXT
from dsh_conformance.model.side_gate import GatedAgent
from dsh_conformance.model.side_merge import HANDBACK_HEADING
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


MEMBERS = (
    ForkIncludesOpenTurn,
    FramingInSystemPrompt,
    FramingUserSourced,
    MergeNotCapped,
    MergeWrongSource,
    ForkTouchesParent,
    ForeignMerge,
    ExplicitHandbackUncapped,
)
