"""Preparation defects: dedupe, self-reference, limits, parallel reads, all-or-nothing,
cancellation and isolation (PREP-*)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import prepare_ops
from dsh_conformance.model import jsstr, prepare
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.prepare import ReadOutcome, ReferenceInput
from zoo import Area
from zoo._base import Broken, Patch

AREA = Area(capabilities=["prepare"], requirements=["PREP-*"])

_normalize = prepare.normalize_references
_prepare = prepare.prepare
_read = prepare_ops.FaultStore.read


def _normalizer(*, dedupe: bool = True, self_check: bool = True, limit: str = "after") -> Any:
    """``normalize_references`` with one step changed (the rest as the model does it)."""

    def normalize(
        target_id: str, references: Sequence[object], max_references: int
    ) -> tuple[ReferenceInput, ...]:
        if limit == "before" and len(references) > max_references:
            raise DshError(ErrorCode.TOO_MANY, f"at most {max_references} references")
        out: list[ReferenceInput] = []
        for ref in references:
            one = _normalize("\x00zoo-no-target", [ref], 1)
            if not one:
                continue
            sid = one[0].session_id
            if self_check and sid == target_id:
                _normalize(target_id, [ref], 1)  # raises SELF_REFERENCE
            if dedupe and any(r.session_id == sid for r in out):
                continue
            out.append(one[0])
        if limit == "after" and len(out) > max_references:
            raise DshError(ErrorCode.TOO_MANY, f"at most {max_references} references")
        return tuple(out)

    return normalize


class NoDedupe(Broken):
    name = "no deduplication"
    invariant = "Prepares a repeated reference once per mention instead of once."
    kills = frozenset({"PREP-001"})
    collateral_ok = frozenset(
        {"ENV-006", "ENV-008", "PREP-003", "PREP-022"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        return ((prepare, "normalize_references", _normalizer(dedupe=False)),)


class SelfReferenceAccepted(Broken):
    name = "self-reference accepted"
    invariant = "Reads the target session itself instead of rejecting its own id."
    kills = frozenset({"PREP-002"})
    # With every check run (D-250), the code check after the seed check fails as well:
    # no error is not the code the profile pins.
    collateral_ok = frozenset({"PREP-007", "PREP-022"})

    def patches(self) -> tuple[Patch, ...]:
        return ((prepare, "normalize_references", _normalizer(self_check=False)),)


class FourthReferenceAccepted(Broken):
    name = "no count limit"
    invariant = "Accepts a fourth (and any further) distinct reference."
    kills = frozenset({"PREP-003"})
    # With every check run (D-250), the code check after the seed check fails as well:
    # no error is not the code the profile pins.
    collateral_ok = frozenset({"PREP-022"})

    def patches(self) -> tuple[Patch, ...]:
        return ((prepare, "normalize_references", _normalizer(limit="none")),)


class LimitBeforeDedupe(Broken):
    name = "limit counted before dedupe"
    invariant = "Applies the count limit to the raw references, so repeats of one session hit it."
    kills = frozenset({"PREP-003"})
    collateral_ok = frozenset(
        {"ENV-006", "ENV-008", "PREP-001", "PREP-011", "PREP-022"}
    )  # the same defect breaks these too
    # Counting first also changes which error wins over self-reference and validation.

    def patches(self) -> tuple[Patch, ...]:
        return ((prepare, "normalize_references", _normalizer(limit="before")),)


class SequentialReads(Broken):
    name = "reads one after another"
    invariant = "Starts each read only after the previous one settled, instead of all in parallel."
    kills = frozenset({"PREP-004"})
    collateral_ok = frozenset({"PREP-006", "PREP-007", "PREP-013"})

    def patches(self) -> tuple[Patch, ...]:
        def settle(outcomes: Sequence[ReadOutcome]) -> tuple[float, int | None]:
            at = 0.0
            for index, outcome in enumerate(outcomes):
                at += outcome.at
                if at == math.inf:
                    return at, None
                if outcome.error is not None:
                    return at, index
            return at, None

        return ((prepare, "settle", settle),)


class PartialContext(Broken):
    name = "failed sources skipped"
    invariant = "Leaves out a source whose read failed and prepares the others."
    kills = frozenset({"PREP-005"})
    # With every check run (D-250), the code check after the seed check fails as well:
    # no error is not the code the profile pins.
    collateral_ok = frozenset({"PREP-007", "PREP-013"})

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        try:
            return self.reference.call("prepare", args)
        except ImplementationError as exc:
            if exc.code != ErrorCode.READ_FAILED:
                raise
        sessions = args.get("sessions") or {}
        faults = args.get("faults") or {}
        kept = [
            ref
            for ref in args.get("references", [])
            if isinstance(ref, Mapping)
            and jsstr.canonical(str(ref.get("sessionId"))) in {jsstr.canonical(k) for k in sessions}
            and (faults.get(ref.get("sessionId")) or {}).get("kind") != "fail"
        ]
        return self.reference.call("prepare", {**args, "references": kept})


class LateCancellationIgnored(Broken):
    name = "cancellation ignored once reads settle"
    invariant = (
        "Ignores a cancellation unless some read never settles (the race is lost to the reads)."
    )
    kills = frozenset({"PREP-007"})
    # PREP-006: a cancellation that should win is not observed (the same defect)
    collateral_ok = frozenset({"PREP-004", "PREP-006"})

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        faults = args.get("faults") or {}
        hangs = any(isinstance(f, Mapping) and f.get("kind") == "never" for f in faults.values())
        if hangs or args.get("cancelAt") == "before":
            return self.reference.call("prepare", args)
        return self.reference.call("prepare", {k: v for k, v in args.items() if k != "cancelAt"})


class ReadsAfterLaterChanges(Broken):
    name = "later source changes leak in"
    invariant = (
        "Renders the source as it is after later appends, deletion or replacement, not as read."
    )
    kills = frozenset({"PREP-008"})
    collateral_ok = frozenset(
        {"PREP-005", "PREP-006", "PREP-007", "PREP-013"}
    )  # the same defect breaks these too

    def patches(self) -> tuple[Patch, ...]:
        def read(store: prepare_ops.FaultStore, sid: str) -> ReadOutcome:
            fault = store.faults.get(sid, {})
            if fault.get("kind") == "mutateAfterRead":
                log = store._log(sid)
                if log is not None:
                    store._mutate(sid, log, fault)
                at = fault.get("ms", fault.get("at"))
                store.faults = {**store.faults, sid: {"kind": "delay", "ms": at}}
            return _read(store, sid)

        return ((prepare_ops.FaultStore, "read", read),)


class LastAppearanceOrder(Broken):
    name = "last-appearance order"
    invariant = (
        "Deduplicates references but orders them by their last appearance (the first label kept)."
    )
    kills = frozenset({"PREP-001"})
    collateral_ok = frozenset({"ENV-006", "ENV-008"})  # the data objects' order, restated

    def patches(self) -> tuple[Patch, ...]:
        def normalize(
            target_id: str, references: Sequence[object], max_references: int
        ) -> tuple[ReferenceInput, ...]:
            first = _normalize(target_id, references, max_references)
            last: dict[str, int] = {}
            for position, ref in enumerate(references):
                if isinstance(ref, Mapping) and isinstance(ref.get("sessionId"), str):
                    last[jsstr.canonical(ref["sessionId"])] = position
            return tuple(sorted(first, key=lambda r: last.get(r.session_id, -1)))

        return ((prepare, "normalize_references", normalize),)


class SettlementOrder(Broken):
    name = "sources in settlement order"
    invariant = (
        "Presents the sources in the order their reads settle (a host that collects them as "
        "they arrive), not in first-appearance order."
    )
    kills = frozenset({"PREP-001"})
    collateral_ok = frozenset({"ENV-006", "ENV-008"})  # the data objects' order, restated

    def patches(self) -> tuple[Patch, ...]:
        def arrival(
            target_id: str,
            content: Sequence[object],
            references: Sequence[object],
            read: Callable[[str], ReadOutcome],
            config: Any = None,
            cancel_at: Any = None,
        ) -> prepare.PrepareRun:
            try:
                limit = (config or ReferenceConfig()).max_references
                refs = _normalize(jsstr.canonical(target_id), references, limit)
            except DshError:
                refs = ()
            if not refs or cancel_at == "before":
                return _prepare(target_id, content, references, read, config, cancel_at)
            seen: dict[str, ReadOutcome] = {}

            def once(sid: str) -> ReadOutcome:
                if sid not in seen:
                    seen[sid] = read(sid)
                return seen[sid]

            order = sorted(range(len(refs)), key=lambda i: (once(refs[i].session_id).at, i))
            arrived = [{"sessionId": refs[i].session_id, "label": refs[i].label} for i in order]
            return _prepare(target_id, content, arrived, once, config, cancel_at)

        return ((prepare_ops, "prepare", arrival),)


class RenderedInReadOrder(Broken):
    name = "rendered in settlement order"
    invariant = (
        "Reports the typed sources in first-appearance order but renders the context with "
        "the sources in the order their reads settle: the typed claim is not what the model "
        "reads (issue 42)."
    )
    kills = frozenset({"PREP-001"})
    collateral_ok = frozenset({"ENV-006", "ENV-008"})  # the data objects' order, restated

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        claimed = self.reference.call("prepare", args)
        if not claimed.get("contexts"):
            return claimed
        with self._extra(SettlementOrder().patches()):
            shown = self.reference.call("prepare", args)
        return {**shown, "sources": claimed["sources"]}


class PreAbortedSignalIgnored(Broken):
    name = "an already aborted signal is ignored"
    invariant = (
        "Listens for the signal's abort event but never checks `signal.aborted`, so a "
        "preparation cancelled before it starts runs to completion."
    )
    kills = frozenset({"PREP-006"})
    # Not cancelled, a pre-aborted preparation over a failing read fails with the read's
    # code instead of SESSION_REFERENCE_CANCELLED.
    collateral_ok = frozenset({"PREP-007"})

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        if args.get("cancelAt") != "before":
            return self.reference.call("prepare", args)
        return self.reference.call("prepare", {k: v for k, v in args.items() if k != "cancelAt"})


MEMBERS = (
    NoDedupe,
    SelfReferenceAccepted,
    FourthReferenceAccepted,
    LimitBeforeDedupe,
    SequentialReads,
    PartialContext,
    LateCancellationIgnored,
    ReadsAfterLaterChanges,
    LastAppearanceOrder,
    SettlementOrder,
    RenderedInReadOrder,
    PreAbortedSignalIgnored,
)
