"""``snapshot.project_json``: a snapshot given as JSON checked and projected in one pass
(issue 44, D-490) gives what the two passes give -- ``SessionSnapshot.from_json`` then
``project`` -- value for value, and for an invalid snapshot the same error, code and
message, including which of two broken events is named.

Catches: a one-pass check that lets through an event ``from_json`` rejects (a bool seq,
an unknown field, a bad surfaceOp), or that names an earlier projection error where the
general path names a later envelope error; and the ``retention.retain`` op answering
differently from retention of the parsed snapshot.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.strategies_sessions import SLOW, session_cases
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.projection import project
from dsh_conformance.model.retention import retain
from dsh_conformance.model.snapshot import SessionSnapshot, project_json

sys.path.insert(0, str(Path(__file__).parent))
from extension_kit import jsstr_path

USER: dict[str, Any] = {"kind": "user"}
#: Ways to break one event (or its data) that the envelope check or projection rejects,
#: and shapes the one pass hands to the general path that are still valid.
BREAKS: dict[str, Any] = {
    "not an object": lambda e: ["x"],
    "bool seq": lambda e: {**e, "seq": True},
    "negative time": lambda e: {**e, "time": -1},
    "unsafe seq": lambda e: {**e, "seq": 2**53},
    "float time": lambda e: {**e, "time": 1.5},
    "type not a string": lambda e: {**e, "type": 7},
    "extra field": lambda e: {**e, "extra": 1},
    "no data": lambda e: {k: v for k, v in e.items() if k != "data"},
    "no time": lambda e: {k: v for k, v in e.items() if k != "time"},
    "bad surfaceOp": lambda e: {**e, "surfaceOp": "prepend"},
    "replace surfaceOp": lambda e: {**e, "surfaceOp": {"op": "replace", "start": 0, "end": 0}},
    "sources": lambda e: {**e, "sourceEventSeqs": [0]},
    "bad sources": lambda e: {**e, "sourceEventSeqs": [-1]},
    "data not an object": lambda e: {**e, "data": [1]},
    "content not an array": lambda e: {**e, "data": {**_data(e), "content": "text"}},
    "block not an object": lambda e: {**e, "data": {**_data(e), "content": ["x"]}},
    "two blocks": lambda e: {
        **e,
        "data": {**_data(e), "content": [{"type": "text", "text": "a"}] * 2},
    },
    "envelope without display": lambda e: {**e, "data": {**_data(e), "envelope": {}}},
    "interrupted": lambda e: {**e, "data": {**_data(e), "interrupted": True}},
    "user source": lambda e: {**e, "type": "user/message", "data": {**_data(e), "source": USER}},
    # The one-text-block shape read without project_data (D-538), and its near misses.
    "one text block": lambda e: _blocks(e, [{"type": "text", "text": "plain 界"}]),
    "lone surrogate text": lambda e: _blocks(e, [{"type": "text", "text": "a\ud800"}]),
    "empty text": lambda e: _blocks(e, [{"type": "text", "text": ""}]),
    "not a text block": lambda e: _blocks(e, [{"type": "image", "text": "x"}]),
    "text not a string": lambda e: _blocks(e, [{"type": "text", "text": 5}]),
    "block with more fields": lambda e: _blocks(e, [{"type": "text", "text": "x", "y": 1}]),
    "assistant reply": lambda e: {
        **_blocks(e, [{"type": "text", "text": "r"}]),
        "type": "assistant/message",
    },
    "user prompt": lambda e: _prompt(e, "user/message", USER),
    "steering from the user": lambda e: _prompt(e, "steering/message", USER),
    "user source with more fields": lambda e: _prompt(e, "user/message", {**USER, "name": "n"}),
    "compact checkpoint": lambda e: _prompt(
        e, "user/message", {"kind": "plugin", "plugin": "compact"}
    ),
    "user prompt with an envelope": lambda e: {
        **_prompt(e, "user/message", USER),
        "data": {
            **_data(_prompt(e, "user/message", USER)),
            "envelope": {"displayContent": [{"type": "text", "text": "shown"}]},
        },
    },
}


def _blocks(event: Any, blocks: list[Any]) -> Any:
    return {**event, "data": {**_data(event), "content": blocks}}


def _prompt(event: Any, type_: str, source: Any) -> Any:
    blocks = [{"type": "text", "text": "p"}]
    return {**event, "type": type_, "data": {**_data(event), "content": blocks, "source": source}}


def _data(event: Any) -> dict[str, Any]:
    data = event.get("data") if isinstance(event, dict) else None
    return dict(data) if isinstance(data, dict) else {}


def _snapshot(session: dict[str, Any]) -> dict[str, Any]:
    events = session["events"]
    return {
        "session": session["header"],
        "capturedThroughSeq": events[-1]["seq"] if events else None,
        "events": events,
    }


def _two_pass(snapshot: object) -> Any:
    try:
        parsed = SessionSnapshot.from_json(snapshot, borrow=True)
        return (parsed.session, parsed.captured_through_seq, project(parsed.events))
    except DshError as exc:
        return (exc.code, exc.message)


def _one_pass(snapshot: object) -> Any:
    try:
        return project_json(snapshot)
    except DshError as exc:
        return (exc.code, exc.message)


def _op(args: dict[str, Any]) -> Any:
    try:
        return ReferenceAdapter().call("retention.retain", args)
    except ImplementationError as exc:
        return (exc.code, exc.message)


def _op_two_pass(args: dict[str, Any]) -> Any:
    """The op as it was before the one pass: parse, label, cap, retain."""
    try:
        snapshot = SessionSnapshot.from_json(args["snapshot"], borrow=True)
        label = args.get("label", snapshot.session.id)
        if not isinstance(label, str):
            return ("SESSION_REFERENCE_INVALID_REFERENCE", "label must be a string")
        cap = args.get("maxBytes", 65_536)
        if type(cap) is not int or cap < 1:
            return ("SESSION_REFERENCE_INVALID_CONFIG", "maxBytes must be a positive safe integer")
        result = retain(snapshot, label, cap)
    except DshError as exc:
        return (exc.code, exc.message)
    return {"data": result.data, "stats": result.stats.to_json(), "source": result.typed()}


@settings(max_examples=150, suppress_health_check=SLOW, deadline=None)
@given(
    case=session_cases(),
    breaks=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(sorted(BREAKS))), max_size=3),
)
def test_one_pass_equals_two_passes(case: Any, breaks: list[tuple[int, str]]) -> None:
    snapshot = _snapshot(copy.deepcopy(case.session))
    events = snapshot["events"]
    for where, how in breaks:
        if events and isinstance(events[where % len(events)], dict):
            i = where % len(events)
            events[i] = BREAKS[how](events[i])
    _agree(snapshot)


#: Breaks projection rejects (the envelope is fine) and breaks the envelope check rejects.
PROJECTION_BREAKS = ("content not an array", "block not an object", "envelope without display")
ENVELOPE_BREAKS = ("bool seq", "negative time", "extra field", "bad surfaceOp", "not an object")


@settings(max_examples=60, suppress_health_check=SLOW, deadline=None)
@given(
    case=session_cases(),
    where=st.tuples(st.integers(0, 40), st.integers(0, 40)),
    projection=st.sampled_from(PROJECTION_BREAKS),
    envelope=st.sampled_from(ENVELOPE_BREAKS),
)
def test_an_envelope_error_wins_over_an_earlier_projection_error(
    case: Any, where: tuple[int, int], projection: str, envelope: str
) -> None:
    snapshot = _snapshot(copy.deepcopy(case.session))
    events = snapshot["events"]
    if len(events) < 2:
        events[:] = _events()
    first, second = sorted(i % len(events) for i in where)
    second = max(second, first + 1) if first + 1 < len(events) else second
    events[first] = BREAKS[projection](BREAKS["user source"](events[first]))
    events[second] = BREAKS[envelope](events[second])
    _agree(snapshot)


def _agree(snapshot: dict[str, Any]) -> None:
    assert _one_pass(snapshot) == _two_pass(snapshot)
    assert _op({"snapshot": snapshot, "maxBytes": 200}) == _op_two_pass(
        {"snapshot": snapshot, "maxBytes": 200}
    )


def _events() -> list[dict[str, Any]]:
    user = {"content": [{"type": "text", "text": "hello"}], "source": USER}
    return [
        {"type": "user/message", "seq": i, "time": i, "data": dict(user), "surfaceOp": "append"}
        for i in range(4)
    ]


def test_a_later_envelope_error_is_named_before_an_earlier_projection_error() -> None:
    events = _events()
    events[1]["data"]["content"] = "not blocks"  # projection error at seq 1
    events[3]["seq"] = True  # envelope error at the last event
    snapshot = {"session": {"id": "s"}, "capturedThroughSeq": 3, "events": events}
    code, message = _one_pass(snapshot)
    assert (code, message) == _two_pass(snapshot)
    assert "seq must be" in message


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"label": 7}, "SESSION_REFERENCE_INVALID_REFERENCE"),
        ({"maxBytes": 0}, "SESSION_REFERENCE_INVALID_CONFIG"),
    ],
)
def test_an_invalid_option_is_raised_after_the_snapshots_own_errors(
    options: dict[str, Any], code: str
) -> None:
    events = _events()
    assert _op({"snapshot": {"session": {"id": "s"}, "events": events}, **options})[0] == code
    events[1]["data"]["content"] = "not blocks"  # projection: raised after the options
    assert _op({"snapshot": {"session": {"id": "s"}, "events": events}, **options})[0] == code
    events[2]["time"] = -1  # the envelope: raised before them
    assert _op({"snapshot": {"session": {"id": "s"}, "events": events}, **options})[0] == (
        "DSH_INVALID_EVENT"
    )


def _mixed_events() -> list[dict[str, Any]]:
    """A user prompt, an assistant reply, a steering prompt, a tool result: each kind of
    event a break below may land on."""
    reply = {"turn": 1, "step": 0, "content": [{"type": "text", "text": "answer"}]}
    events = _events()[:2]
    events.append({"type": "assistant/message", "seq": 2, "time": 2, "data": reply})
    steering = {"content": [{"type": "text", "text": "steer"}], "source": USER}
    events.append({"type": "steering/message", "seq": 3, "time": 3, "data": steering})
    events.append({"type": "tool/result", "seq": 4, "time": 4, "data": {"output": "o"}})
    return events


@pytest.mark.parametrize("fast", [True, False], ids=["accelerated", "pure"])
@pytest.mark.parametrize("how", sorted(BREAKS))
@pytest.mark.parametrize("where", range(5))
def test_every_break_on_every_kind_of_event_agrees(how: str, where: int, fast: bool) -> None:
    """Fixed examples the generated ones may miss: each break, on each event of a session
    of every kind, read by the one pass as by the two, on the accelerator's path and on
    the pure one (the one-text-block shape, D-538, and each of its near misses included)."""
    events = _mixed_events()
    events[where] = BREAKS[how](events[where])
    with jsstr_path(fast):
        _agree({"session": {"id": "s"}, "capturedThroughSeq": 4, "events": events})
