"""Side-session programs for ``side.scenario.run`` (docs/side-scenario.md).

A program is built from a few choices -- how the parent got where it is (plain turns, a
compacted seed), where the fork lands (between turns, while a request is in flight, in the
middle of a tool batch, while a hanging request is cancelled), how the child runs (alone,
beside the parent, after the parent was disposed of) and which handbacks are merged under
which caps.  Every text is unique and names its owner (``P3`` the parent's, ``C2`` the
child's, ``hb-1`` a handback), so a check can tell whose words ended up where.
"""

from __future__ import annotations

import json
from typing import Any, Final

from attrs import define, field, frozen
from hypothesis import strategies as st

PARENT_ID: Final = "parent"
CHILD_ID: Final = "side"
CWD: Final = "/workspace/project"
OPTIONS: Final[dict[str, Any]] = {
    "persona": "You are the project assistant for {{cwd}} on {{model}}.",
    "sections": [{"order": 50, "text": "Prefer small diffs."}],
    "tools": [
        {
            "name": "read_file",
            "description": "Read a file",
            "result": [{"type": "text", "text": "contents"}],
        }
    ],
}
_USER: Final = {"kind": "user"}
_MOCK: Final = {"provider": "mock", "model": "scripted"}


def _event(kind: str, seq: int, data: dict[str, Any], op: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = {"type": kind, "seq": seq, "time": 0, "data": data}
    if op is not None:
        event["surfaceOp"] = op
    return event


def _said(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


#: A parent history whose first turn a compaction replaced with a summary (SIDE-029).
COMPACTED_SEED: Final[list[dict[str, Any]]] = [
    _event("turn/start", 0, {"turn": 1, "trigger": {"kind": "message", "source": _USER}}),
    _event("user/message", 1, {"content": _said("SHADOWED OLD USER"), "source": _USER}, "append"),
    _event("step/start", 2, {"turn": 1, "step": 1}),
    _event("request/header", 3, {"header": {"config": _MOCK}, "reason": "initial"}),
    _event(
        "assistant/message",
        4,
        {"turn": 1, "step": 1, "content": _said("SHADOWED OLD ASSISTANT"), "provenance": _MOCK},
        "append",
    ),
    _event("step/end", 5, {"turn": 1, "step": 1}),
    _event("turn/end", 6, {"turn": 1, "reason": {"kind": "completed"}}),
    {
        **_event(
            "user/message",
            7,
            {
                "content": _said("<compacted-summary>Retained checkpoint.</compacted-summary>"),
                "source": {"kind": "plugin", "plugin": "compact"},
            },
            {"op": "replace", "start": 1, "end": 4},
        ),
        "sourceEventSeqs": [1, 4],
    },
]
#: Where the fork lands.
FORK_POINTS: Final = ("idle", "in-flight", "tool-batch", "cancelled")


@frozen
class Merge:
    """One handback round: the cap, and the handback the child's model writes."""

    cap: int
    size: int = 40
    unit: str = "a"


@frozen
class Plan:
    """The choices a program is built from."""

    turns_before: int = 1
    compacted: bool = False
    fork: str = "idle"
    child_turns: int = 1
    beside: bool = False  # the parent works while the child's first request is in flight
    dispose_parent: bool = False  # the parent is disposed of before the child's last turn
    merges: tuple[Merge, ...] = (Merge(512),)


@define
class _Builder:
    steps: list[dict[str, Any]] = field(factory=list)
    replies: dict[str, list[dict[str, Any]]] = field(factory=lambda: {"parent": [], "child": []})
    on: Any = "start"
    idle: int = 0
    serial: int = 0

    def next_phase(self) -> None:
        self.idle += 1
        self.on = {"idle": self.idle}

    def name(self, owner: str) -> str:
        self.serial += 1
        return f"{owner}{self.serial}"

    def step(self, do: str, on: Any = None, **fields: Any) -> None:
        self.steps.append({"on": self.on if on is None else on, "do": do, **fields})

    def send(self, session: str, reply: dict[str, Any] | None = None, on: Any = None) -> int:
        """A user prompt to *session* answered with text; returns its request's index."""
        owner = "P" if session == "parent" else "C"
        text = self.name(owner)
        fields = {} if session == "parent" else {"session": "child"}
        self.step("send", on, text=f"{text} question", **fields)
        self.replies[session].append(reply or {"text": f"{text} answer"})
        return len(self.replies[session])


def handback(index: int, merge: Merge) -> str:
    body = merge.unit * merge.size
    return f"hb-{index}: {body} end-{index}"


def build(plan: Plan) -> dict[str, Any]:
    """The ``side.scenario.run`` script of *plan*."""
    b = _Builder()
    for n in range(plan.turns_before):
        if n:
            b.next_phase()
        b.send("parent")
    b.next_phase()
    if plan.fork == "idle":
        b.step("fork")
        b.send("child")
    elif plan.fork == "in-flight":
        n = b.send("parent")
        b.step("fork", on={"request": n})
        b.send("child", on={"request": n})
    elif plan.fork == "tool-batch":
        call = {"id": "P-call", "name": "read_file"}
        b.replies["parent"].append({"toolCalls": [call]})
        n = b.send("parent")  # request n - 1 answers with the call, n with text
        b.step("fork", on={"request": n})
        b.send("child", on={"request": n})
    else:  # the fork and the child's first prompt while a hanging request is cancelled
        n = b.send("parent", reply={"hang": True})
        b.step("fork", on={"request": n})
        b.send("child", on={"request": n})
        b.step("cancel", on={"request": n})
    for turn in range(1, plan.child_turns):
        b.next_phase()
        c = b.send("child")
        if plan.beside and turn == 1:
            b.send("parent", on={"request": c, "session": "child"})
    if plan.beside and plan.child_turns == 1:
        b.next_phase()
        b.send("parent")
        b.send("child")
    if plan.dispose_parent:
        b.next_phase()
        b.step("dispose")
        b.send("child")
    for index, merge in enumerate(plan.merges, start=1):
        b.next_phase()
        b.step("askHandback", cap=merge.cap)
        b.replies["child"].append({"text": handback(index, merge)})
        b.next_phase()
        b.step("mergeBack", cap=merge.cap)
        if not plan.dispose_parent:
            b.send("parent")
    b.replies["child"].append({"text": "spare answer"})  # a host whose framing asks the model
    parent: dict[str, Any] = {"id": PARENT_ID, "header": {"cwd": CWD}, "options": OPTIONS}
    if plan.compacted:
        parent["seed"] = COMPACTED_SEED
    return {"parent": parent, "child": CHILD_ID, "replies": b.replies, "steps": b.steps}


EXAMPLE_PLANS: Final = (
    Plan(),
    Plan(turns_before=2, fork="in-flight", child_turns=2),
    Plan(fork="tool-batch", child_turns=2, beside=True),
    Plan(fork="cancelled", child_turns=2),
    Plan(turns_before=2, dispose_parent=True, merges=()),
    Plan(compacted=True, fork="in-flight"),
    Plan(merges=(Merge(256, 600, "界"), Merge(300, 20), Merge(4096, 100, "😀"))),
    Plan(child_turns=3, beside=True, merges=(Merge(256, 10), Merge(512, 2000))),
)
EXAMPLES: Final = tuple(build(p) for p in EXAMPLE_PLANS)

merges = st.builds(
    Merge,
    cap=st.sampled_from([256, 300, 512, 1024, 4096]),
    size=st.integers(min_value=1, max_value=1500),
    unit=st.sampled_from(["a", "é", "界", "😀"]),
)
plans = st.builds(
    Plan,
    turns_before=st.integers(min_value=1, max_value=3),
    compacted=st.booleans(),
    fork=st.sampled_from(FORK_POINTS),
    child_turns=st.integers(min_value=1, max_value=3),
    beside=st.booleans(),
    dispose_parent=st.booleans(),
    merges=st.lists(merges, max_size=3).map(tuple),
)


def scripts() -> st.SearchStrategy[dict[str, Any]]:
    """Generated programs (each a valid script)."""
    return plans.map(build)


def replayable(script: dict[str, Any]) -> str:
    """One line a developer can paste into ``side.scenario.run`` to replay a failure."""
    return "replay with side.scenario.run: " + json.dumps(script, ensure_ascii=True)
