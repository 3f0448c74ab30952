"""Interactive side sessions: fork and attach, advisor framing, merge-back (seed 004).

"A side session is an ordinary live session forked at the source's last completed turn,
attached to its own agent, framed as a read-only advisor, and able to merge back one
condensed note." (SIDE-003).  The operations compose what the agent already offers, as the
note requires ("it adds no core service or session-store method", SIDE-006): creating a
seeded agent, ``inject()``, ``send()``.  They act on a registry of live agents by id, the
same one the agent operations use; the only state is the agents themselves (a child is
recognised by its header's ``parentSession``, D-93).

Pure parts live in side_fork (the prefix), side_framing (the framing), side_merge (cap,
handback, merged text), side_gate (the optional deny gate), side_compact (a compaction).
Every failure raises DshError before anything is created or appended (D-102).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.side_fork import plan_fork
from dsh_conformance.model.side_framing import (
    SIDECHAT_SOURCE,
    framing_content,
    framing_meta,
    is_framed,
)
from dsh_conformance.model.side_gate import GatedAgent
from dsh_conformance.model.side_merge import (
    find_handback,
    handback_request,
    merge_content,
    merge_meta,
    merged_text,
    validate_cap,
)
from dsh_conformance.model.turn import is_turn_open

Agents = MutableMapping[str, Agent]


def lookup(agents: Mapping[str, Agent], agent_id: object) -> Agent:
    found = agents.get(agent_id) if isinstance(agent_id, str) else None
    if found is None:
        raise DshError(ErrorCode.AGENT_NOT_FOUND, f"no agent {agent_id!r}")
    return found


def _live(agent: Agent) -> Agent:
    if agent.status == "disposed":
        raise DshError(ErrorCode.AGENT_DISPOSED, f"agent {jsstr.quote(agent.id)} is disposed")
    return agent


def seed_length_of(agent: Agent) -> int:
    """The seedLength of a side-session child, or DSH_SIDE_NOT_A_CHILD."""
    header = agent.header
    if header.parent_session is None or header.seed_length is None:
        raise DshError(
            ErrorCode.SIDE_NOT_A_CHILD, f"agent {jsstr.quote(agent.id)} is not a side session"
        )
    return header.seed_length


def child_id_for(agents: Mapping[str, Agent], parent_id: str) -> str:
    """D-110: the first free ``<parent>/side-<n>``, n = 1, 2, …"""
    n = 1
    while f"{parent_id}/side-{n}" in agents:
        n += 1
    return f"{parent_id}/side-{n}"


@frozen
class ForkResult:
    """What side.fork reports (SIDE-005, SIDE-067)."""

    child: str
    parent: str
    seed_length: int
    compacted: bool
    framing_seq: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "child": self.child,
            "parentSession": self.parent,
            "seedLength": self.seed_length,
            "compacted": self.compacted,
            "framingSeq": self.framing_seq,
        }


def fork(
    agents: Agents,
    parent_id: object,
    *,
    child_id: object = None,
    frame: bool = True,
    deny_tools: Iterable[str] = (),
) -> ForkResult:
    """SIDE-003..SIDE-008, SIDE-020, SIDE-050..SIDE-052: fork *parent* into a framed child.

    The child is a new root agent (D-100) with the parent's options and cwd (D-101), seeded
    with the balanced completed-turn prefix (D-90, D-91), header stamped with parentSession
    and seedLength (D-93), then framed (D-94).  Every child can take a deny gate (D-108),
    empty unless *deny_tools* names tools.  The parent is only read.
    """
    parent = _live(lookup(agents, parent_id))
    if child_id is None:
        new_id = child_id_for(agents, parent.id)
    elif isinstance(child_id, str):
        new_id = jsstr.canonical(child_id)
    else:
        raise DshError(ErrorCode.INVALID_ARGUMENT, "a child id must be a string")
    if new_id in agents:
        raise DshError(ErrorCode.INVALID_ARGUMENT, f"agent {jsstr.quote(new_id)} already exists")
    plan = plan_fork(parent.header, parent.events, new_id)
    child = GatedAgent(plan.header, plan.seed, parent.options, deny_tools or ())
    agents[new_id] = child
    framing_seq = _frame(child, parent.id) if frame else None
    return ForkResult(new_id, parent.id, plan.seed_length, plan.compacted, framing_seq)


def _frame(child: Agent, parent_id: str) -> int:
    before = len(child.events)
    child.inject(thaw(framing_content()), thaw(SIDECHAT_SOURCE), thaw(framing_meta(parent_id)))
    return next(e.seq for e in child.events[before:] if e.type == "context/message")


def frame(agents: Agents, child_id: object) -> int:
    """SIDE-054 (D-94): frame an unframed child whose appended history is empty."""
    child = lookup(agents, child_id)
    seed_length = seed_length_of(child)
    _live(child)
    if is_framed(child.events, seed_length):
        raise DshError(
            ErrorCode.SIDE_ALREADY_FRAMED, f"side session {jsstr.quote(child.id)} is framed"
        )
    if len(child.events) > seed_length:
        raise DshError(
            ErrorCode.SIDE_FRAME_NOT_AT_HEAD,
            f"side session {jsstr.quote(child.id)} already has appended history",
            hint="frame a child right after side.fork (frame: false)",
        )
    assert child.header.parent_session is not None
    return _frame(child, child.header.parent_session)


def ask_handback(agents: Agents, child_id: object, cap: object = None) -> None:
    """SIDE-058 (D-106): send the child the sidechat handback request naming the cap."""
    limit = validate_cap(cap)
    child = lookup(agents, child_id)
    seed_length_of(child)
    _live(child)
    child.send([{"type": "text", "text": handback_request(limit)}], thaw(SIDECHAT_SOURCE))


@frozen
class MergeResult:
    """What side.mergeBack reports: where the context went and what it holds."""

    seq: int | None
    deferred: bool
    text: str
    meta: Any

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "deferred": self.deferred,
            "text": self.text,
            "meta": thaw(self.meta),
        }


def merge_back(
    agents: Agents,
    parent_id: object,
    child_id: object,
    *,
    cap: object = None,
    text: object = None,
) -> MergeResult:
    """SIDE-009, SIDE-010, SIDE-025, SIDE-031, SIDE-055..SIDE-061: merge one capped note.

    Checks, in order (D-102): cap, text type, both agents exist, the child is this
    parent's, the parent is live, a handback exists and fits.  Then one inject() into the
    parent (D-99): a one-shot injection turn when idle, the current position inside a
    turn, after the results during a tool batch (``deferred``).
    """
    limit = validate_cap(cap)
    if text is not None and not isinstance(text, str):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "a handback text must be a string")
    parent = lookup(agents, parent_id)
    child = lookup(agents, child_id)
    seed_length = seed_length_of(child)
    if child.header.parent_session != parent.id:
        raise DshError(
            ErrorCode.SIDE_NOT_A_CHILD,
            f"{jsstr.quote(child.id)} is not a side session of {jsstr.quote(parent.id)}",
        )
    _live(parent)
    if text is None:
        handback = find_handback(child.events, seed_length)
        if handback is None:
            raise DshError(
                ErrorCode.SIDE_NO_HANDBACK,
                f"side session {jsstr.quote(child.id)} has no handback",
                hint="side.askHandback, then run the child until its turn completes",
            )
        merged = merged_text(handback, limit, explicit=False)
    else:
        merged = merged_text(text, limit, explicit=True)
    meta = merge_meta(child.id, merged)
    deferred = is_turn_open(parent.events) and bool(parent.state()["toolBatch"])
    before = len(parent.events)
    parent.inject(thaw(merge_content(merged)), thaw(SIDECHAT_SOURCE), thaw(meta))
    seq = next((e.seq for e in parent.events[before:] if e.type == "context/message"), None)
    return MergeResult(seq, deferred, merged.text, meta)


def gate(agents: Agents, child_id: object, deny: object) -> None:
    """SIDE-066 (D-108): set the child's deny list (the tools its gate refuses to run)."""
    if not isinstance(deny, list | tuple) or not all(isinstance(t, str) for t in deny):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "deny must be an array of tool names")
    child = lookup(agents, child_id)
    seed_length_of(child)
    if not isinstance(child, GatedAgent):
        raise DshError(
            ErrorCode.SIDE_NOT_A_CHILD, f"agent {jsstr.quote(child.id)} is not a side session"
        )
    child.deny = frozenset(jsstr.canonical(t) for t in deny)
