"""side_invariants.prefix_meanings, the one-pass replay of every log prefix, against its
definition: ``meaning(derive(events[:k]))`` for each ``k`` (issue 44)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_conformance.conformance.side_invariants import (
    derive,
    meaning,
    prefix_meanings,
    prefix_messages,
)

KINDS = ("user/message", "assistant/message", "tool/result", "context/message", "step/start")


@st.composite
def logs(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events appending messages of every kind (empty assistant ones too) and replacing
    seq ranges of the current surface, with non-surface events between."""
    events: list[dict[str, Any]] = []
    surface: list[int] = []
    for seq in range(draw(st.integers(0, 14))):
        kind = draw(st.sampled_from(KINDS))
        text = draw(st.sampled_from(["", "a", "b c"]))
        content = [{"type": "text", "text": text}] if text else []
        event: dict[str, Any] = {"type": kind, "seq": seq, "time": 0, "data": {}}
        if kind == "tool/result":
            event["data"] = {"callId": f"c{seq}", "content": content}
        elif kind != "step/start":
            event["data"] = {"content": content}
        if kind != "step/start":
            if surface and draw(st.booleans()):
                lo = draw(st.integers(0, len(surface) - 1))
                hi = draw(st.integers(lo, len(surface) - 1))
                event["surfaceOp"] = {"op": "replace", "start": surface[lo], "end": surface[hi]}
                surface[lo : hi + 1] = [seq]
            else:
                event["surfaceOp"] = "append"
                surface.append(seq)
        events.append(event)
    return events


def definition(events: list[dict[str, Any]]) -> list[Any]:
    return [meaning(derive(events[:k])) for k in range(len(events) + 1)]


@given(logs())
def test_every_prefix_reads_as_its_own_replay(events: list[dict[str, Any]]) -> None:
    assert prefix_meanings(events) == definition(events)
    assert prefix_messages(events) == [derive(events[:k]) for k in range(len(events) + 1)]


def test_a_replace_of_an_unknown_seq_fails_alike() -> None:
    events = [
        {"type": "user/message", "seq": 0, "data": {"content": []}, "surfaceOp": "append"},
        {"type": "user/message", "seq": 1, "data": {}, "surfaceOp": {"start": 7, "end": 7}},
    ]
    with pytest.raises(ValueError, match="7 is not in list"):
        definition(events)
    with pytest.raises(ValueError, match="7 is not in list"):
        prefix_meanings(events)
    with pytest.raises(ValueError, match="7 is not in list"):
        prefix_messages(events)
