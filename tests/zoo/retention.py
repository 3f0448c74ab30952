"""Retention defects: the per-source byte cap, dropping and head/tail slicing (RET-*)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from dsh_conformance.adapters.reference import prepare_ops
from dsh_conformance.model import config, headtail, jsstr, retention
from dsh_conformance.model import prepare as prepare_module
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.headtail import Truncation
from dsh_conformance.model.projection import ProjectedItem
from dsh_conformance.model.retention import RetainedSource
from zoo import Area
from zoo._base import Broken, Patch

AREA = Area(capabilities=["retention", "prepare"], requirements=["RET-*"])

_truncate = headtail.truncate_with_notice
_cut = headtail.head_tail_cut
_project = retention.project
_retain = retention.retain


def _truncations(replacement: object) -> tuple[Patch, ...]:
    """Replace the slicer wherever retention and the truncate operation call it."""
    return (
        (headtail, "truncate_with_notice", replacement),
        (retention, "truncate_with_notice", replacement),
    )


class DefaultCap8K(Broken):
    name = "8 KiB default cap"
    invariant = "Defaults the per-source cap to 8,192 bytes instead of 65,536."
    kills = frozenset({"RET-001"})

    def patches(self) -> tuple[Patch, ...]:
        fields = tuple(
            (name, 8192 if name == "maxReferenceBytes" else default)
            for name, default in config._FIELDS
        )
        return ((prepare_ops, "DEFAULT_MAX_REFERENCE_BYTES", 8192), (config, "_FIELDS", fields))


class CapOffByOne(Broken):
    name = "cap off by one"
    invariant = "Accepts a serialized source of cap + 1 bytes (compares with `>` against cap + 1)."
    kills = frozenset({"RET-001"})
    collateral_ok = frozenset({"RET-006"})

    def patches(self) -> tuple[Patch, ...]:
        size = retention._size
        return ((retention, "_size", lambda fixed, items, count: size(fixed, items, count) - 1),)


class CheckpointsDropped(Broken):
    name = "checkpoints dropped"
    invariant = "Treats compact checkpoints like other old messages, so they are dropped first."
    kills = frozenset({"RET-002"})
    collateral_ok = frozenset({"RET-007"})  # the source no longer reports itself compacted

    def patches(self) -> tuple[Patch, ...]:
        def project(events: Any) -> tuple[ProjectedItem, ...]:
            return tuple(ProjectedItem(p.role, p.text) for p in _project(events))

        return ((retention, "project", project),)


class HeadOnlySlices(Broken):
    name = "head-only slicing"
    invariant = "Keeps only the head of an oversized text (no tail), with an exact notice."
    kills = frozenset({"RET-003"})
    collateral_ok = frozenset({"RET-009", "RET-013"})  # head-only is unbalanced too

    def patches(self) -> tuple[Patch, ...]:
        return ((headtail, "head_tail_cut", lambda data, head, tail: _cut(data, head + tail, 0)),)


class CharacterCounts(Broken):
    name = "omitted characters, not bytes"
    invariant = "Counts omitted UTF-16 characters instead of UTF-8 bytes in the omission notice."
    kills = frozenset({"RET-003"})
    collateral_ok = frozenset({"RET-006", "RET-007", "RET-009"})

    def patches(self) -> tuple[Patch, ...]:
        def truncate(text: str, max_bytes: int, data: bytes | None = None) -> Truncation:
            out = _truncate(text, max_bytes, data)
            if out.omitted == 0:
                return out
            kept = out.text[: len(out.text) - len(headtail.notice(out.omitted))]
            lost = max(0, jsstr.js_length(text) - jsstr.js_length(kept))
            return Truncation(kept + headtail.notice(lost), lost, out.fits)

        return _truncations(truncate)


class SilentTruncation(Broken):
    name = "no omission notice"
    invariant = "Slices an oversized text without appending the omission notice."
    kills = frozenset({"RET-006"})
    collateral_ok = frozenset({"RET-002", "RET-003", "RET-009", "RET-011", "RET-013"})

    def patches(self) -> tuple[Patch, ...]:
        return ((headtail, "notice", lambda omitted: ""),)


class NeverTruncates(Broken):
    name = "never slices"
    invariant = "Drops old messages but never slices a text: fails when the remainder does not fit."
    kills = frozenset({"RET-003"})
    collateral_ok = frozenset({"RET-001", "RET-011"})

    def patches(self) -> tuple[Patch, ...]:
        def truncate(text: str, max_bytes: int, data: bytes | None = None) -> Truncation:
            out = _truncate(text, max_bytes, data)
            return out if out.omitted == 0 else Truncation(text, 0, False)

        return ((retention, "truncate_with_notice", truncate),)


class GivesUpOnAShortTarget(Broken):
    name = "gives up when one text cannot meet its target"
    invariant = (
        "Fails the source as soon as one text cannot be sliced to its target with a notice, "
        "although another preserved text could still shrink (the reference model failed "
        "like this, less often, until stop 31)."
    )
    kills = frozenset({"RET-011"})

    def patches(self) -> tuple[Patch, ...]:
        def truncate(text: str, max_bytes: int, data: bytes | None = None) -> Truncation:
            out = _truncate(text, max_bytes, data)
            if not out.fits:
                raise retention._budget_exceeded()
            return out

        return ((retention, "truncate_with_notice", truncate),)


class DroppedNotTruncated(Broken):
    name = "drops not counted as truncation"
    invariant = "Reports `truncated: false` when messages were dropped but no text was sliced."
    kills = frozenset({"RET-007"})

    def op_retention_retain(self, args: Mapping[str, Any]) -> Any:
        out = self.reference.call("retention.retain", args)
        stats = out["stats"]
        sliced = stats["omittedBytes"] > 0 and any(
            "omitted" in item["text"] and "UTF-8 bytes" in item["text"]
            for item in out["data"]["conversation"]
        )
        return {**out, "stats": {**stats, "truncated": sliced}}


class NewerDroppedFirst(Broken):
    name = "newer messages dropped first"
    invariant = (
        "Drops the youngest droppable message first (keeping the oldest), instead of the oldest."
    )
    kills = frozenset({"RET-002"})
    # RET-005/007/012 restate the order.  RET-003 is real collateral: in the reversed
    # order the member's output can hold a cut text that is not a head-and-tail slice of
    # the message at its place (test_retention_properties: "kept only one end", head 0).
    collateral_ok = frozenset({"RET-003", "RET-005", "RET-007", "RET-012"})

    def patches(self) -> tuple[Patch, ...]:
        def retain(snapshot: Any, label: str, max_bytes: int = 65536, projected: Any = None) -> Any:
            items = list(_project(snapshot.events) if projected is None else projected)
            newest = len(items) - 1
            older = [i for i, p in enumerate(items) if not p.checkpoint and i != newest]
            # Feed the older droppable items in reverse, so "oldest first" drops the youngest.
            swapped = list(items)
            for at, source in zip(older, reversed(older), strict=True):
                swapped[at] = items[source]
            out = _retain(snapshot, label, max_bytes, swapped)
            conversation = out.data["conversation"]
            fixed = len(items) - len(older)
            kept = (
                sorted(
                    [i for i in range(len(items)) if i not in older]
                    + older[len(older) - (len(conversation) - fixed) :]
                )
                if conversation
                else []
            )
            real = {at: source for at, source in zip(older, reversed(older), strict=True)}
            order = sorted(range(len(kept)), key=lambda n: real.get(kept[n], kept[n]))
            data = {**out.data, "conversation": [conversation[n] for n in order]}
            omitted = tuple(out.omitted[n] for n in order) if out.omitted else ()
            flags = tuple(out.checkpoints[n] for n in order) if out.checkpoints else ()
            return attrs.evolve(out, data=data, omitted=omitted, checkpoints=flags)

        return (
            (retention, "retain", retain),
            (prepare_ops, "retain", retain),
            (prepare_module, "retain", retain),
        )


#: The largest cap a configuration can give: nothing is ever retained away under it.
_UNCAPPED = 2**53 - 1


class RenderedUncapped(Broken):
    name = "rendering ignores the cap"
    invariant = (
        "Reports the capped source in its typed fields (serializedBytes within the cap, "
        "messages dropped and cut, the framing of a capped context) but renders the context, "
        "and hands over retention's data, uncapped: what the model reads is not what was "
        "counted (issue 42)."
    )
    kills = frozenset({"RET-001", "RET-002", "RET-003"})
    # the retained texts it claims are not in the rendering either (ENV-001); the
    # reference's notice and measure of the data object (profile)
    collateral_ok = frozenset({"ENV-001", "RET-006", "RET-014"})

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        claimed = self.reference.call("prepare", args)
        if not claimed.get("contexts"):
            return claimed
        config = {**(args.get("config") or {}), "maxReferenceBytes": _UNCAPPED}
        shown = self.reference.call("prepare", {**args, "config": config})
        return {**shown, "sources": claimed["sources"], "framingBytes": claimed["framingBytes"]}

    def op_retention_retain(self, args: Mapping[str, Any]) -> Any:
        claimed = self.reference.call("retention.retain", args)
        shown = self.reference.call("retention.retain", {**args, "maxBytes": _UNCAPPED})
        return {**claimed, "data": shown["data"]}


class FixedFieldsOutsideTheBudget(Broken):
    name = "fixed fields outside the budget"
    invariant = (
        "Budgets only the conversation: a source whose fixed fields alone exceed its cap is "
        "emitted with an empty conversation instead of failing the preparation."
    )
    kills = frozenset({"RET-004"})
    # The emitted source is over its cap (RET-001) and the reference's fixed fields did
    # not fail (RET-014): the same defect.
    collateral_ok = frozenset({"RET-001", "RET-014"})

    def patches(self) -> tuple[Patch, ...]:
        def retain(snapshot: Any, label: str, max_bytes: int = 65536, projected: Any = None) -> Any:
            try:
                return _retain(snapshot, label, max_bytes, projected)
            except DshError as exc:
                empty = _retain(snapshot, label, 2**53 - 1, ())
                if exc.code != ErrorCode.BUDGET_EXCEEDED or empty.size <= max_bytes:
                    raise
            items = _project(snapshot.events) if projected is None else projected
            stats = attrs.evolve(
                empty.stats,
                compacted=any(p.checkpoint for p in items),
                original_messages=len(items),
                omitted_messages=len(items),
                omitted_bytes=sum(len(jsstr.utf8_encode(p.text)) for p in items),
                truncated=bool(items),
            )
            return attrs.evolve(empty, stats=stats)

        return (
            (retention, "retain", retain),
            (prepare_ops, "retain", retain),
            (prepare_module, "retain", retain),
        )


class RawTextAccounting(Broken):
    name = "bytes counted on the raw texts"
    invariant = (
        "Counts each retained text by its raw UTF-8 bytes, not as the serializer writes it "
        "(quotes, escapes, tag-safe '<'), and reports that count as serializedBytes."
    )
    kills = frozenset({"SER-006"})
    # The profile pins serializedBytes to the tag-safe JSON (RET-014) and the reference's
    # cuts and failures, which the raw count moves (RET-006, RET-011).
    # (and the rendering holds more bytes than the raw count claims, D-442: RET-001)
    collateral_ok = frozenset({"RET-001", "RET-006", "RET-011", "RET-014"})

    def patches(self) -> tuple[Patch, ...]:
        def raw_length(data: bytes) -> int:
            return len(data)

        def typed(source: RetainedSource) -> dict[str, Any]:
            return _typed(source) | {"serializedBytes": source.size}

        return (
            (retention, "tag_safe_length_of", raw_length),
            (retention.RetainedSource, "typed", typed),
        )


_typed = retention.RetainedSource.typed


MEMBERS = (
    DefaultCap8K,
    CapOffByOne,
    CheckpointsDropped,
    HeadOnlySlices,
    CharacterCounts,
    SilentTruncation,
    NeverTruncates,
    GivesUpOnAShortTarget,
    DroppedNotTruncated,
    NewerDroppedFirst,
    RenderedUncapped,
    FixedFieldsOutsideTheBudget,
    RawTextAccounting,
)
