"""A compaction turn, so a side session can fork a compacted source (SIDE-029, D-109).

"A compacted source forks its compacted view, so a bound UI should disclose that the child
inherits summaries rather than replaced turns." (seed 004).  The reference agent has no
compaction of its own; this writes what the seed-era compact plugin leaves in a log: one
turn holding a ``user/message`` with source ``{kind: plugin, plugin: compact}`` whose
``replace`` surfaceOp shadows the whole current surface (research note B §4.4, §6.1).
"""

from __future__ import annotations

from typing import Final

from dsh_conformance.model import jsstr
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.session import Replace
from dsh_conformance.model.turn import is_turn_open, last_turn_number

COMPACT_SOURCE: Final = FrozenDict({"kind": "plugin", "plugin": "compact"})


def checkpoint_text(summary: str) -> str:
    """The checkpoint's text: the summary inside ``<compacted-summary>`` tags."""
    return f"<compacted-summary>{summary}</compacted-summary>"


def compact(agent: Agent, summary: str) -> int:
    """Replace *agent*'s whole surface with one checkpoint; returns the checkpoint's seq.

    Only between turns (DSH_INVALID_ARGUMENT inside a turn, on an empty surface, or on a
    disposed agent), so the compaction is a closed turn of its own.
    """
    if agent.status == "disposed":
        raise DshError(ErrorCode.AGENT_DISPOSED, f"agent {jsstr.quote(agent.id)} is disposed")
    if is_turn_open(agent.events):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "cannot compact inside an open turn")
    nodes = agent.log.surface()
    if not nodes:
        raise DshError(ErrorCode.INVALID_ARGUMENT, "nothing to compact: the surface is empty")
    turn = last_turn_number(agent.events) + 1
    log = agent.log
    log.append(
        "turn/start", {"turn": turn, "trigger": {"kind": "injection", "source": COMPACT_SOURCE}}
    )
    event = log.append(
        "user/message",
        {
            "content": [{"type": "text", "text": checkpoint_text(summary)}],
            "source": COMPACT_SOURCE,
        },
        surface_op=Replace(nodes[0].seq, nodes[-1].seq),
        source_event_seqs=[n.seq for n in nodes],
    )
    log.append("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
    return event.seq
