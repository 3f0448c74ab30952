"""Hypothesis strategies for scenario scripts (docs/scenario.md), and replayable printing.

Every message and context text is unique and says whose it is (``msg-3``, ``ctx-3-1``,
``lctx-2``, ``inj-5``), so an oracle can tell from the log alone which record an event came
from.  Scripts are valid by construction: triggers stay within what the script can reach
and every hanging reply gets a cancel or a disposal on its request.  Listeners keep the
attached contexts (rewrite, add-contexts and block wrap or replace only the prompt), so
"a message and its contexts share fate" holds for every generated submission.
"""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import example
from hypothesis import strategies as st

TOOLS: Final = ({"name": "lookup"}, {"name": "search"})
AGENT_ID: Final = "scenario-target"
PREFIX: Final = "prompt-prefix"


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def hook_context(body: str, placement: str | None, meta: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"source": {"kind": "plugin", "plugin": "ctx"}, "content": text(body)}
    if placement is not None:
        out["placement"] = placement
    if meta:
        out["meta"] = {"of": body}
    return out


def replayable(script: dict[str, Any]) -> str:
    """One line a developer can paste into ``scenario.run`` to replay a failure."""
    return "replay with scenario.run: " + json.dumps(script, ensure_ascii=False)


@st.composite
def contexts(draw: st.DrawFn, owner: str) -> list[dict[str, Any]]:
    count = draw(st.integers(0, 3))
    return [
        hook_context(
            f"ctx-{owner}-{j + 1}",
            draw(st.sampled_from([None, "separate", PREFIX, PREFIX])),
            draw(st.booleans()),
        )
        for j in range(count)
    ]


@st.composite
def replies(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["text"] * 3 + ["tools"] * 3 + ["error", "hang"]))
        if kind == "text":
            out.append({"text": f"reply-{i + 1}"})
        elif kind == "tools":
            calls = [
                {"id": f"call-{i + 1}-{j + 1}", "name": draw(st.sampled_from(TOOLS))["name"]}
                for j in range(draw(st.integers(1, 2)))
            ]
            out.append({"toolCalls": calls})
        elif kind == "error":
            out.append({"error": f"failure-{i + 1}", "code": "SCRIPTED"})
        else:
            out.append({"hang": True})
        if kind in {"error", "hang"} and draw(st.booleans()):
            out[-1]["partial"] = f"partial-{i + 1}"  # an unfinished stream (PROJ-004)
    return out


def _triggers(answers: list[dict[str, Any]], prompts: int, messages: int) -> list[Any]:
    """Every trigger the script can reach; the likely ones (first turn, first call) twice."""
    call_ids = [c["id"] for r in answers for c in r.get("toolCalls", ())]
    out: list[Any] = ["start", {"idle": 1}, {"idle": 2}]
    out += [{"submit": k} for k in range(1, prompts + 1)]
    out += [{"request": n} for n in range(1, len(answers) + 1)]
    out += [{"toolCall": c} for c in call_ids]
    out += [{"turnEnd": t} for t in range(1, messages + 1)]
    likely = [
        {"turnEnd": 1},
        {"request": 1},
        {"submit": 1},
        *[{"toolCall": c} for c in call_ids[:1]],
    ]
    return out + [t for t in likely if t in out] * 2


def _step(draw: st.DrawFn, index: int, action: str, on: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"on": on, "do": action}
    owner = str(index + 1)
    if action in {"send", "steer"}:
        step["text"] = f"msg-{owner}"
        attached = draw(contexts(owner))
        if attached:
            step["contexts"] = attached
    elif action == "inject":
        step["text"] = f"inj-{owner}"
        if draw(st.booleans()):
            step["meta"] = {"inj": owner}
    return step


@st.composite
def scripts(draw: st.DrawFn, *, listeners: bool = True, side: bool = False) -> dict[str, Any]:
    """A whole scenario script over one agent with two tools: one or two prompts at the
    start, then host actions at triggers the run is likely to reach; with *side*, a side
    session forked at the start merges back at such triggers."""
    answers = draw(replies())
    opening = draw(st.lists(st.sampled_from(["send", "send", "steer"]), min_size=1, max_size=2))
    later = draw(
        st.lists(
            st.sampled_from(["send", "steer", "steer", "steer", "inject", "cancel", "dispose"]),
            max_size=5,
        )
    )
    actions = opening + later
    prompts = sum(1 for a in actions if a in {"send", "steer"})
    messages = sum(1 for a in actions if a in {"send", "steer", "inject"})
    triggers = _triggers(answers, prompts, messages)
    steps = [_step(draw, i, action, "start") for i, action in enumerate(opening)]
    steps += [
        _step(draw, len(opening) + i, action, draw(st.sampled_from(triggers)))
        for i, action in enumerate(later)
    ]
    for n, reply in enumerate(answers, start=1):
        if reply.get("hang"):
            steps.append(
                {"on": {"request": n}, "do": draw(st.sampled_from(["cancel", "cancel", "dispose"]))}
            )
    script: dict[str, Any] = {
        "agent": {"id": AGENT_ID, "options": {"tools": list(TOOLS)}},
        "replies": answers,
        "steps": steps,
    }
    if side:
        steps.insert(0, {"on": "start", "do": "fork", "child": "side-1"})
        for k in range(draw(st.integers(1, 3))):
            on = draw(st.sampled_from(triggers))
            steps.append({"on": on, "do": "mergeBack", "child": "side-1", "text": f"merge-{k}"})
    if listeners:
        chain = [draw(listener(prompts, k + 1)) for k in range(draw(st.integers(0, 2)))]
        if chain:
            script["listeners"] = chain
    return script


@st.composite
def listener(draw: st.DrawFn, prompts: int, number: int = 1) -> dict[str, Any]:
    """A listener decision that keeps attached contexts (or blocks the whole prompt); its
    texts carry *number*, unique in the chain."""
    kind = draw(st.sampled_from(["rewrite", "add-contexts", "block", "stop"]))
    if kind == "stop":
        return {"event": "turn-stop", "kind": "stop", "turn": draw(st.integers(1, 3))}
    out: dict[str, Any] = {"kind": kind}
    if prompts and draw(st.booleans()):
        out["submission"] = draw(st.integers(1, prompts))
    if kind == "rewrite":
        out["content"] = text(f"rewritten-{number}")
    elif kind == "add-contexts":
        placement = draw(st.sampled_from([None, PREFIX]))
        out["contexts"] = [hook_context(f"lctx-{number}", placement, False)]
        out["position"] = draw(st.sampled_from(["prepend", "append"]))
    else:
        out["reason"] = f"blocked-{number}"
    return out


# --- hand-picked scripts every scenario test also runs (whatever the Hypothesis profile) ---

_TOOLS_OPTIONS: Final = {"tools": list(TOOLS)}


def _message(action: str, owner: str, on: Any = "start") -> dict[str, Any]:
    """A send/steer with one prefix and one separate context."""
    return {
        "on": on,
        "do": action,
        "text": f"msg-{owner}",
        "contexts": [
            hook_context(f"ctx-{owner}-1", PREFIX, True),
            hook_context(f"ctx-{owner}-2", None, False),
        ],
    }


def _script(replies_: list[Any], steps: list[Any], **extra: Any) -> dict[str, Any]:
    agent = {"id": AGENT_ID, "options": _TOOLS_OPTIONS}
    return {"agent": agent, "replies": replies_, "steps": steps, **extra}


EXAMPLES: Final[tuple[dict[str, Any], ...]] = (
    # late steering: accepted while turn 1 closes, converted to turn 2's queued message
    _script(
        [{"text": "reply-1"}, {"text": "reply-2"}],
        [_message("send", "1"), _message("steer", "2", {"turnEnd": 1})],
    ),
    # drained steering: during a tool call and while a model call is in flight
    _script(
        [{"toolCalls": [{"id": "call-1-1", "name": "lookup"}]}, {"text": "r2"}, {"text": "r3"}],
        [
            _message("send", "1"),
            _message("steer", "2", {"toolCall": "call-1-1"}),
            _message("steer", "3", {"request": 2}),
        ],
    ),
    # a block, then an admitted prompt with contexts
    _script(
        [{"text": "reply-1"}],
        [_message("send", "1"), _message("send", "2")],
        listeners=[{"kind": "block", "reason": "blocked-1", "submission": 1}],
    ),
    # cancel while the model hangs drops queued and steering records with their contexts;
    # a later prompt is disposed of while queued
    _script(
        [{"hang": True}, {"text": "reply-2"}],
        [
            _message("send", "1"),
            _message("send", "2"),
            _message("steer", "3", {"request": 1}),
            {"on": {"request": 1}, "do": "cancel"},
            _message("send", "4", {"idle": 1}),
            {"on": {"idle": 1}, "do": "dispose"},
        ],
    ),
    # a terminal stop discards steering that arrives as the turn closes
    _script(
        [{"text": "reply-1"}, {"text": "reply-2"}],
        [_message("send", "1"), _message("steer", "2", {"turnEnd": 1}), _message("send", "3")],
        listeners=[{"event": "turn-stop", "kind": "stop", "turn": 1}],
    ),
    # while prompt-submit runs: steering and an injection; then a cancel during the next one
    _script(
        [{"text": "reply-1"}, {"text": "reply-2"}],
        [
            _message("send", "1"),
            _message("steer", "2", {"submit": 1}),
            {"on": {"submit": 1}, "do": "inject", "text": "inj-3"},
            _message("send", "4", {"turnEnd": 1}),
            {"on": {"submit": 2}, "do": "cancel"},
        ],
    ),
    # a rewrite plus a listener context, all kept with the message
    _script(
        [{"text": "reply-1"}],
        [_message("send", "1")],
        listeners=[
            {"kind": "rewrite", "content": text("rewritten-1")},
            {"kind": "add-contexts", "contexts": [hook_context("lctx-1", PREFIX, False)]},
        ],
    ),
)


def with_examples(test: Any) -> Any:
    """Apply every hand-picked script as a Hypothesis ``@example(script=...)``."""
    for script in reversed(EXAMPLES):
        test = example(script=script)(test)
    return test
