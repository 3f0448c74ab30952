"""Side sessions, fork: the parent's balanced completed-turn prefix (SIDE-004, SIDE-050).

"Fork and attach: create the child with the parent's balanced completed-turn prefix and
stamp parentSession and seedLength in its metadata" (seed 004).  The prefix is the longest
one that ends at a ``turn/end`` of any reason (D-90) and is *balanced* (D-91, research
note B §4.5): no open turn, no open step, every ``tool/call`` and every assistant
``tool-call`` block answered by a ``tool/result`` in its step, turns numbered 1, 2, 3…
An in-flight turn is clipped, not rejected.  These are pure functions of an event log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from dsh_conformance.model.session import Event, Replace, SessionHeader


def _data(event: Event) -> Mapping[str, Any]:
    return event.data if isinstance(event.data, Mapping) else {}


def _tool_call_ids(event: Event) -> list[str]:
    """Ids of the ``tool-call`` blocks of an ``assistant/message``."""
    content = _data(event).get("content", ())
    if not isinstance(content, Sequence) or isinstance(content, str):
        return []
    return [
        str(block.get("id"))
        for block in content
        if isinstance(block, Mapping) and block.get("type") == "tool-call"
    ]


class _Balance:
    """The turn/step/tool-pairing trace of research note B §4.5, fed one event at a time."""

    def __init__(self) -> None:
        self.open_turn: int | None = None
        self.open_step: int | None = None
        self.next_turn = 1
        self.pending: set[str] = set()

    @property
    def balanced(self) -> bool:
        return self.open_turn is None and self.open_step is None and not self.pending

    def feed(self, event: Event) -> bool:
        """Advance over *event*; False when the log stops being balanceable here."""
        data = _data(event)
        kind = event.type
        if kind == "turn/start":
            if self.open_turn is not None or data.get("turn") != self.next_turn:
                return False
            self.open_turn = self.next_turn
            return True
        if kind == "turn/end":
            if self.open_turn is None or self.open_step is not None:
                return False
            if data.get("turn") != self.open_turn:
                return False
            self.open_turn = None
            self.next_turn += 1
            return True
        if kind == "step/start":
            if self.open_turn is None or self.open_step is not None:
                return False
            self.open_step = int(data.get("step", 0))
            return True
        if kind == "step/end":
            if self.open_step is None or self.pending:
                return False  # a call left without its result can never be paired
            self.open_step = None
            return True
        if kind == "tool/call":
            if self.open_step is None:
                return False
            self.pending.add(str(data.get("callId")))
            return True
        if kind == "assistant/message":
            if self.open_step is None:
                return False
            self.pending.update(_tool_call_ids(event))
            return True
        if kind == "tool/result" and not isinstance(event.surface_op, Replace):
            if self.open_step is None:
                return False
            self.pending.discard(str(data.get("callId")))
            return True
        return True


def balanced_prefix_length(events: Sequence[Event]) -> int:
    """SIDE-050 (D-90, D-91): the length of the longest balanced prefix ending at a turn/end.

    0 when the log has no such prefix (D-92).  A structural fault ends the search: no
    prefix reaching past it can be balanced.
    """
    trace = _Balance()
    best = 0
    for index, event in enumerate(events):
        if not trace.feed(event):
            break
        if event.type == "turn/end" and trace.balanced:
            best = index + 1
    return best


def is_compacted(seed: Sequence[Event]) -> bool:
    """SIDE-067 (D-109): does the seed hold a surface replace (a compaction)?"""
    return any(isinstance(event.surface_op, Replace) for event in seed)


@frozen
class ForkPlan:
    """What a fork creates: the seed (frozen copies of the prefix) and the child header."""

    seed: tuple[Event, ...]
    header: SessionHeader
    compacted: bool

    @property
    def seed_length(self) -> int:
        return len(self.seed)


def plan_fork(parent: SessionHeader, events: Sequence[Event], child_id: str) -> ForkPlan:
    """SIDE-004, SIDE-005 (D-93): the child's seed and header for forking *events* now.

    The seed is a copy of the prefix events (``Event`` values are immutable, so sharing is
    copying); the header stamps parentSession and seedLength (0 included) and keeps cwd.
    ``createdAt`` is the model's deterministic clock (0), not the parent's.
    """
    length = balanced_prefix_length(events)
    seed = tuple(events[:length])
    header = SessionHeader(
        id=child_id,
        cwd=parent.cwd,
        parent_session=parent.id,
        seed_length=length,
    )
    return ForkPlan(seed, header, is_compacted(seed))
