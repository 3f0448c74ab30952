"""The open turn's bookkeeping and the driver's program counter (seed 000 "Decision").

Apart from the agent so the readers of a log (side sessions, compaction, the scenario
driver) can ask whether a turn is open, and which turn is the latest, without the agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any, Final

from attrs import define, field, frozen

from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.inbox import InboxRecord
from dsh_conformance.model.session import Event

USER_CANCEL: Final = FrozenDict({"kind": "user"})
ABORTED_BEFORE_DISPATCH: Final = "TOOL_ABORTED_BEFORE_DISPATCH"


@frozen
class ToolOutcome:
    """What one tool call produced: its result content, error flag and error record."""

    content: Any
    is_error: bool = False
    error: Mapping[str, str] | None = None


class Phase(StrEnum):
    """The driver's program counter: which micro-step runs next."""

    HEAD = "claim"
    SUBMIT = "submit"
    MODEL = "model"
    STREAM = "stream"
    TOOL = "tool"
    POST_STEP = "post-step"
    TURN_STOP = "turn-stop"
    FLUSH = "flush"
    DISPOSED = "disposed"


@define
class Turn:
    """Bookkeeping of the open turn (upstream ``runTurn`` locals)."""

    number: int
    record: InboxRecord
    reason: Any = field(factory=lambda: FrozenDict({"kind": "completed"}))
    step: int = 0
    step_open: bool = False
    calls: tuple[Any, ...] = ()
    call_index: int = 0
    had_tool_calls: bool = False
    steered: bool = False
    cont: bool = False
    pending: Any = None  # a held reply, delivered by the ``stream`` micro-step


def last_turn_number(events: Sequence[Event]) -> int:
    """The latest ``turn/start`` number, or 0 (seeded logs continue numbering)."""
    for event in reversed(events):
        if event.type == "turn/start" and isinstance(event.data, Mapping):
            turn = event.data.get("turn")
            if isinstance(turn, int):
                return turn
    return 0


def is_turn_open(events: Sequence[Event]) -> bool:
    """Whether the last turn boundary in the log is a ``turn/start``."""
    for event in reversed(events):
        if event.type in {"turn/start", "turn/end"}:
            return event.type == "turn/start"
    return False
