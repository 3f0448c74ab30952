"""The accelerator's ``plain_projection`` against its definition, ``snapshot._plain_projection``.

The retention and preparation ops read a snapshot given as JSON in one pass (D-490); the
events of the common envelope and the messages of one text block are read by
``plain_projection`` (D-538), in C when the accelerator is built.  Both forms must give
the same answer on every input: real sessions, each event broken or made hostile in one
way (a str or int subclass, a dict subclass, a key that is no str, a key whose ``__eq__``
raises), and values of no event shape at all.  That what they give is projection's own
reading is tests/test_snapshot_project_json.py's (the one pass against the two, on both
paths).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_conformance.conformance.strategies_sessions import SLOW, session_cases
from dsh_conformance.model.snapshot import _plain_projection

sys.path.insert(0, str(Path(__file__).parent))
from extension_kit import needs_extension

try:
    from dsh_conformance.model import _jsfast
except ImportError:  # pragma: no cover - depends on the build
    _jsfast = None  # type: ignore[assignment]


class Text(str):
    """A str subclass: equal to its value, never read as one by either form."""


class Count(int):
    """An int subclass."""


class Object(dict):  # type: ignore[type-arg]
    """A dict subclass."""


class Sly:
    """A key hashing as ``"type"`` whose equality raises: no form may compare it."""

    def __hash__(self) -> int:
        return hash("type")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("a key's __eq__ was called")


def _user(text: Any = "hello", **more: Any) -> dict[str, Any]:
    data = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}, **more}
    return {"type": "user/message", "seq": 0, "time": 0, "data": data}


def _reply(content: Any, **more: Any) -> dict[str, Any]:
    return {"type": "assistant/message", "seq": 1, "time": 1, "data": {"content": content, **more}}


FIXED: dict[str, Any] = {
    "no list": {"events": []},
    "a list subclass": type("L", (list,), {})([_user()]),
    "a tuple": (_user(), _reply([{"type": "text", "text": "r"}])),
    "empty": [],
    "common": [_user(), _reply([{"type": "text", "text": "r 界"}])],
    "append": [{**_user(), "surfaceOp": "append"}],
    "append as a str subclass": [{**_user(), "surfaceOp": Text("append")}],
    "replace": [{**_user(), "surfaceOp": "replace"}],
    "an event subclass": [Object(_user())],
    "a key that is no str": [{**_user(), 1: 2}],
    "a key that raises": [{Sly(): "user/message", "seq": 0, "time": 0, "data": {}}],
    "a data key that raises": [{**_user(), "data": {Sly(): 1, "content": []}}],
    "a str subclass key": [{Text("type"): "user/message", "seq": 0, "time": 0, "data": {}}],
    "a str subclass type": [{**_user(), "type": Text("user/message")}],
    "a bool seq": [{**_user(), "seq": True}],
    "an int subclass time": [{**_user(), "time": Count(3)}],
    "a float seq": [{**_user(), "seq": 1.0}],
    "an unsafe seq": [{**_user(), "seq": 2**53}],
    "the largest safe time": [{**_user(), "time": 2**53 - 1}],
    "a huge seq": [{**_user(), "seq": 2**200}],
    "a negative time": [{**_user(), "time": -1}],
    "no data": [{"type": "user/message", "seq": 0, "time": 0, "surfaceOp": "append"}],
    "data not a dict": [{**_user(), "data": [1]}],
    "data a dict subclass": [{**_user(), "data": Object(_user()["data"])}],
    "data not a dict, not projected": [{**_user(), "type": "tool/result", "data": 7}],
    "a source subclass": [_user(source=Object(kind="user"))],
    "a source key that is no str": [_user(source={"kind": "user", 3: 1})],
    "a kind subclass": [_user(source={"kind": Text("user")})],
    "a plugin source": [_user(source={"kind": "plugin", "plugin": "compact"})],
    "an envelope": [_user(envelope={"displayContent": []})],
    "a None envelope": [_user(envelope=None)],
    "a text subclass": [_user(Text("x"))],
    "an empty text": [_user("")],
    "a lone surrogate": [_user("a\ud800")],
    "a pair as two code points": [_user("\ud83d\ude00")],
    "astral": [_user("😀 é 界")],
    "interrupted": [_reply([{"type": "text", "text": "r"}], interrupted=True)],
    "interrupted 1": [_reply([{"type": "text", "text": "r"}], interrupted=1)],
    "two blocks": [_reply([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])],
    "a tuple of blocks": [_reply(({"type": "text", "text": "a"},))],
    "a block subclass": [_reply([Object(type="text", text="a")])],
    "a block key that is no str": [_reply([{"type": "text", "text": "a", 0: 0}])],
    "a block type subclass": [_reply([{"type": Text("text"), "text": "a"}])],
    "not a text block": [_reply([{"type": "image", "text": "a"}])],
    "steering": [{**_user(), "type": "steering/message"}],
    "a later event of another shape": [_user(), _reply([]), ["x"]],
}


def _both(events: Any) -> tuple[Any, Any]:
    assert _jsfast is not None
    return _jsfast.plain_projection(events), _plain_projection(events)


@needs_extension
@pytest.mark.parametrize("name", sorted(FIXED))
def test_plain_projection_agrees_on_every_hostile_shape(name: str) -> None:
    fast, pure = _both(FIXED[name])
    assert fast == pure
    assert [type(e) for e in fast or ()] == [tuple] * len(fast or ())


def test_the_definition_reads_what_it_says() -> None:
    """The definition itself, on the shapes that decide (a check of the fixed table)."""
    assert _plain_projection(FIXED["common"]) == [
        ("user", "hello", 5),
        ("assistant", "r 界", 5),
    ]
    assert _plain_projection(FIXED["no list"]) is None
    assert _plain_projection(FIXED["a later event of another shape"]) is None
    kept = _plain_projection(FIXED["a lone surrogate"])
    assert kept is not None
    assert len(kept[0]) == 2  # (type, data): project_data reads it
    assert _plain_projection(FIXED["data not a dict, not projected"]) == []


#: One-event changes a generated session's events may get.
CHANGES: tuple[Any, ...] = (
    lambda e: {**e, "seq": Count(e.get("seq", 0))},
    lambda e: {**e, "surfaceOp": "append"},
    lambda e: Object(e),
    lambda e: {**e, "data": Object(e.get("data", {}))},
    lambda e: {**e, "type": Text(e.get("type", ""))},
    lambda e: {k: v for k, v in e.items() if k != "time"},
)


@needs_extension
@settings(max_examples=80, suppress_health_check=SLOW, deadline=None)
@given(
    case=session_cases(),
    changes=st.lists(st.tuples(st.integers(0, 40), st.integers(0, len(CHANGES) - 1)), max_size=2),
)
def test_plain_projection_agrees_on_generated_sessions(
    case: Any, changes: list[tuple[int, int]]
) -> None:
    events = copy.deepcopy(case.session["events"])
    for where, which in changes:
        if events and isinstance(events[where % len(events)], dict):
            events[where % len(events)] = CHANGES[which](events[where % len(events)])
    fast, pure = _both(events)
    assert fast == pure
