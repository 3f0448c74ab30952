"""Preparation implementations with one defect each, for the holes of issue 11.

Each wraps the reference model (or the kit's own exact retention, tests/allowed_preparation.py)
and breaks one invariant; tests/test_broken_preparation.py checks it is killed and blamed on
its own requirement ids.  Selectable as ``python:broken_preparation:<factory>``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from allowed_preparation import OPEN, OwnRetention, WithRetention, Wrapped


class SmallDefaultCap(Wrapped):
    """Issue 11 item 1: the default per-source cap is 8 KiB, not 65,536 bytes."""

    name = "8 KiB default cap"
    default: int | None = 8192

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        config = dict(args.get("config") or {})
        if config.get("maxReferenceBytes") is None:
            config["maxReferenceBytes"] = self.default if self.default else 2**53 - 1
        return self.reference.call("prepare", {**args, "config": config})


class NoDefaultCap(SmallDefaultCap):
    """Issue 11 item 1: no cap at all unless one is configured."""

    name = "no default cap"
    default = None


class RereadsAfterMutation(Wrapped):
    """Issue 11 item 9: renders from the source as changed after the read (append/replace)."""

    name = "rereads the mutated source"

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        sessions = copy.deepcopy(dict(args.get("sessions") or {}))
        faults = dict(args.get("faults") or {})
        for sid, fault in list(faults.items()):
            if fault.get("kind") != "mutateAfterRead" or fault.get("delete"):
                continue
            if "replace" in fault:
                sessions[sid] = fault["replace"]
            for event in fault.get("append", ()):
                events = sessions[sid]["events"]
                events.append(dict(event, seq=len(events)))
            del faults[sid]
        return self.reference.call("prepare", {**args, "sessions": sessions, "faults": faults})


class RawClosingTag(Wrapped):
    """Issue 11 item 6: a closing tag spelled by source text is written raw into the prompt."""

    name = "raw closing tag in the data region"

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        return self.prepare_rewritten(
            args,
            lambda text: text.replace("\\u003c/referenced-sessions>", "</referenced-sessions>"),
            framing=False,
        )


class NoWarning(Wrapped):
    """ENV-001: the data region with no warning above it (the opening tag leads the prompt)."""

    name = "no warning above the data"

    def op_prepare(self, args: Mapping[str, Any]) -> Any:
        return self.prepare_rewritten(args, lambda text: text[text.index(OPEN) :])


def small_default_cap() -> SmallDefaultCap:
    return SmallDefaultCap()


def no_default_cap() -> NoDefaultCap:
    return NoDefaultCap()


def head_only() -> WithRetention:
    """Issue 11 item 3: slices keep only the head of a text."""
    return WithRetention(OwnRetention(head_share=Fraction(1)), "head-only slices")


def over_dropping() -> WithRetention:
    """Issue 11 item 3: drops every older message as soon as the source does not fit."""
    return WithRetention(OwnRetention(over_drop=True), "over-dropping")


def never_slices() -> WithRetention:
    """Issue 11 item 2: fails whenever dropping alone does not make the source fit."""
    return WithRetention(OwnRetention(slices=False), "never slices")


def strips_bom() -> WithRetention:
    """Issue 11 item 4: decodes slices like TextDecoder's default, losing a leading BOM."""
    return WithRetention(OwnRetention(strip_bom=True), "BOM-stripping slices")


def drops_newer_first() -> WithRetention:
    """Issue 25: drops the youngest droppable message first, keeping the oldest."""
    return WithRetention(OwnRetention(drop_newer=True), "drops newer messages first")


def rereads_after_mutation() -> RereadsAfterMutation:
    return RereadsAfterMutation()


def raw_closing_tag() -> RawClosingTag:
    return RawClosingTag()


def no_warning() -> NoWarning:
    return NoWarning()


#: factory -> (the seed/profile ids it must be blamed on, the kit tests that kill it).
KIT: Mapping[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "small_default_cap": (frozenset({"RET-001"}), ("test_prepare.py::test_the_default_cap",)),
    "no_default_cap": (frozenset({"RET-001"}), ("test_prepare.py::test_the_default_cap",)),
    "head_only": (
        frozenset({"RET-003", "RET-013"}),
        ("test_retention.py::test_slices_keep_both_ends",),
    ),
    "over_dropping": (
        frozenset({"RET-012"}),
        ("test_retention.py::test_drop_what_is_needed_then_slice",),
    ),
    "never_slices": (
        frozenset({"RET-003"}),
        ("test_retention.py::test_drop_what_is_needed_then_slice",),
    ),
    "strips_bom": (
        frozenset({"RET-003"}),
        ("test_retention.py::test_a_byte_order_mark_at_a_cut",),
    ),
    "drops_newer_first": (
        frozenset({"RET-002"}),
        ("test_retention.py::test_older_messages_are_dropped_first",),
    ),
    "rereads_after_mutation": (
        frozenset({"PREP-008"}),
        ("test_prepare.py::test_later_source_changes",),
    ),
    "raw_closing_tag": (
        frozenset({"ENV-007", "ENV-003"}),
        ("test_prepare.py::test_upstream_hostile_source_text",),
    ),
    "no_warning": (frozenset({"ENV-001"}), ("test_prepare.py::test_warning_text",)),
}
FACTORIES: Mapping[str, Callable[[], Wrapped]] = {
    "small_default_cap": small_default_cap,
    "no_default_cap": no_default_cap,
    "head_only": head_only,
    "over_dropping": over_dropping,
    "never_slices": never_slices,
    "strips_bom": strips_bom,
    "drops_newer_first": drops_newer_first,
    "rereads_after_mutation": rereads_after_mutation,
    "raw_closing_tag": raw_closing_tag,
    "no_warning": no_warning,
}
