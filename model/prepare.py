"""``prepare()``: references in, one frozen prompt-prefix context out -- or nothing.

Seed 000 "Snapshot and projection", paragraph 1 (PREP-*).  Preparation deduplicates in
first-appearance order, rejects the target id, enforces the count limit, starts every
read before any settles, and is all-or-nothing: a validation, read, cancellation or
budget error rejects the whole operation.

The model is synchronous, so time is virtual (D-44): each read settles at a virtual time
(or never) and cancellation happens at a virtual time (or before preparation starts).
``Promise.all`` semantics decide the outcome: the operation settles when the earliest
read fails, or when the last read succeeds; a cancellation at or before that moment wins.
A read that settles after cancellation changes nothing: the outcome is already CANCELLED.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.envelope import framing_bytes, hook_context
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import freeze, thaw
from dsh_conformance.model.projection import Projected, project
from dsh_conformance.model.retention import RetainedSource, retain
from dsh_conformance.model.snapshot import SessionSnapshot

#: Virtual time; ``math.inf`` means "never settles".
NEVER: Final = math.inf
Cancel = float | Literal["before"] | None


@frozen
class ReferenceInput:
    """One normalized reference: a session id and its label (the id when none was given)."""

    session_id: str
    label: str


@frozen
class ReadOutcome:
    """How one read settles: at virtual time ``at`` with a snapshot, or with an error."""

    at: float = 0.0
    snapshot: SessionSnapshot | None = None
    projected: Sequence[Projected] = ()
    error: str | None = None

    @classmethod
    def ok(cls, snapshot: SessionSnapshot, at: float = 0.0) -> ReadOutcome:
        """A successful read; projecting here makes a malformed surface a read failure."""
        try:
            return cls(at, snapshot, project(snapshot.events))
        except DshError as exc:
            return cls(at, error=f"invalid session surface: {exc.message}")

    @classmethod
    def failed(cls, message: str, at: float = 0.0) -> ReadOutcome:
        return cls(at, error=message)


#: Starts one read of a session id; returns how it will settle.
Reader = Callable[[str], ReadOutcome]


@frozen
class PrepareRun:
    """The result of ``prepare``: the accepted content and the contexts (0 or 1)."""

    content: list[Any]
    contexts: list[dict[str, Any]]
    references: tuple[ReferenceInput, ...] = ()
    settled_at: float = 0.0
    sources: tuple[RetainedSource, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {"content": thaw(self.content), "contexts": thaw(self.contexts)}
        if self.contexts:
            out["sources"] = [{"sessionId": s.data["sessionId"], **s.typed()} for s in self.sources]
            out["framingBytes"] = framing_bytes(len(self.sources))
        return out


def _invalid_reference(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_REFERENCE, message)


def normalize_references(
    target_id: str, references: Sequence[object], max_references: int
) -> tuple[ReferenceInput, ...]:
    """PREP-001..PREP-003, PREP-011, D-42: validate in input order, dedupe, then count.

    Each element must be an object with a string ``sessionId`` and, if present, a string
    ``label``; the target's own id is SELF_REFERENCE wherever it appears (checked before
    deduplication); a repeated id keeps its first occurrence and label; the count limit
    applies to the deduplicated list.
    """
    seen: set[str] = set()
    out: list[ReferenceInput] = []
    for ref in references:
        if not isinstance(ref, Mapping):
            raise _invalid_reference("session reference must be an object")
        sid = ref.get("sessionId")
        label = ref.get("label", jsstr.UNDEFINED)
        if not isinstance(sid, str) or not (label is jsstr.UNDEFINED or isinstance(label, str)):
            raise _invalid_reference(
                "session reference must contain a string sessionId and optional string label"
            )
        sid = jsstr.canonical(sid)
        if sid == target_id:
            raise DshError(
                ErrorCode.SELF_REFERENCE,
                f"session {jsstr.quote(target_id)} cannot reference itself",
            )
        if sid in seen:
            continue
        seen.add(sid)
        out.append(ReferenceInput(sid, jsstr.canonical(label) if isinstance(label, str) else sid))
    if len(out) > max_references:
        raise DshError(
            ErrorCode.TOO_MANY, f"a message may reference at most {max_references} sessions"
        )
    return tuple(out)


def _cancelled() -> DshError:
    return DshError(ErrorCode.CANCELLED, "session reference preparation was cancelled")


def settle(outcomes: Sequence[ReadOutcome]) -> tuple[float, int | None]:
    """``Promise.all``: (settle time, index of the failing read or None), D-45.

    The earliest failure rejects (ties: lowest input index); otherwise the last success
    resolves; a never-settling read without a failure means the time is NEVER.
    """
    failures = [(o.at, i) for i, o in enumerate(outcomes) if o.error is not None]
    if failures:
        at, index = min(failures)
        if at < NEVER:
            return at, index
    return max((o.at for o in outcomes), default=0.0), None


def prepare(
    target_id: str,
    content: Sequence[object],
    references: Sequence[object],
    read: Reader,
    config: ReferenceConfig | None = None,
    cancel_at: Cancel = None,
) -> PrepareRun:
    """PREP-001..PREP-014: prepare one message's references, all or nothing."""
    config = config or ReferenceConfig()
    if not isinstance(content, list | tuple):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "content must be an array of content blocks")
    jsstr.stringify(list(content))  # non-JSON content is DSH_JSON_NOT_SERIALIZABLE
    accepted = thaw(freeze(list(content)))  # always a fresh copy (PREP-011)
    target_id = jsstr.canonical(target_id)
    refs = normalize_references(target_id, references, config.max_references)
    if not refs:
        return PrepareRun(accepted, [])  # D-43: nothing to read, nothing to cancel
    if cancel_at == "before":
        raise _cancelled()
    # Every read starts before any settles (PREP-004): all outcomes are fixed up front.
    outcomes = [read(ref.session_id) for ref in refs]
    at, failed = settle(outcomes)
    if cancel_at is not None and cancel_at <= at:
        raise _cancelled()  # D-44: cancellation at or before settlement wins
    if at == NEVER:
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            "a read never settles and nothing cancels preparation: it would never return",
            hint="give cancelAt when a read never settles",
        )
    if failed is not None:
        raise DshError(
            ErrorCode.READ_FAILED, f"failed to read referenced session: {outcomes[failed].error}"
        )
    sources: list[RetainedSource] = []
    for ref, outcome in zip(refs, outcomes, strict=True):
        assert outcome.snapshot is not None
        sources.append(
            retain(outcome.snapshot, ref.label, config.max_reference_bytes, outcome.projected)
        )
    return PrepareRun(accepted, [hook_context(sources)], refs, at, tuple(sources))
