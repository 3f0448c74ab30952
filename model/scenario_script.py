"""Scenario scripts: the schema, the checks beyond it, and the validated plan (docs/scenario.md).

``validate`` rejects a malformed script before anything runs, naming the offending item by
JSON Pointer, so a run (model/scenario.py) never starts on a script it cannot finish.
``side.scenario.run`` (model/side_scenario.py) shares the loader and the step shape.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from attrs import frozen

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import FrozenDict
from dsh_conformance.model.prompt_submit import Listener, parse_listener
from dsh_conformance.model.scripted import validate_response
from dsh_conformance.model.session import events_from_json
from dsh_conformance.model.turn import last_turn_number

if TYPE_CHECKING:
    from dsh_conformance.spec.compiled import Compiled

Trigger = tuple[Any, ...]
Decode = Callable[[Any], Any]

MESSAGE_ACTIONS: Final = frozenset({"send", "steer", "inject"})
#: Fields each action may carry besides ``on`` and ``do``.
FIELDS: Final[Mapping[str, frozenset[str]]] = {
    "send": frozenset({"text", "content", "source", "contexts", "prepared"}),
    "steer": frozenset({"text", "content", "source", "contexts", "prepared"}),
    "inject": frozenset({"text", "content", "source", "meta"}),
    "cancel": frozenset({"cause"}),
    "dispose": frozenset(),
    "fork": frozenset({"child"}),
    "mergeBack": frozenset({"child", "text", "cap"}),
    "prepare": frozenset({"text", "content", "references", "target"}),
}
#: Triggers a prepare step may use: preparation is the host's, between turns or before any.
PREPARE_TRIGGERS: Final = frozenset({"start", "idle"})
#: Fields an action must carry.
REQUIRED: Final[Mapping[str, frozenset[str]]] = {
    "fork": frozenset({"child"}),
    "mergeBack": frozenset({"child", "text"}),
    "prepare": frozenset({"references"}),
}


def _error(code: ErrorCode, pointer: str, message: str) -> DshError:
    return DshError(code, f"{pointer or '/'}: {message}", hint="see docs/scenario.md")


@functools.cache
def script_validator(*files: str) -> Compiled:
    """The validator of the ``script`` that the last of *files* defines (the schemas it
    refers to come first), compiled once per process (D-500): one loader for
    scenario.run and side.scenario.run.  The spec package is imported here, on the
    first validation, not with the model (a served process never loads its TOML
    machinery unless a script arrives: issue 44)."""
    from importlib import resources

    from dsh_conformance.spec.compiled import Compiled

    schemas = resources.files("dsh_conformance.spec") / "schemas"
    loaded = [
        json.loads((schemas / name).read_text(encoding="utf-8")) for name in ("data.json", *files)
    ]
    return Compiled(
        {"$ref": loaded[-1]["$id"] + "#/$defs/script"},
        [(data["$id"], data) for data in loaded],
    )


def _validator() -> Compiled:
    return script_validator("ops/agent.json", "ops/scenario.json")


def _pointer(path: Sequence[object]) -> str:
    return "".join(f"/{part}" for part in path)


@frozen
class Step:
    """One host action: its index in the script, trigger key and JSON fields."""

    index: int
    trigger: Trigger
    action: str
    fields: FrozenDict


@frozen
class Plan:
    """A validated script, ready to run."""

    agent: Mapping[str, Any]
    listeners: tuple[tuple[Mapping[str, Any], Listener], ...]
    replies: tuple[FrozenDict, ...]
    steps: tuple[Step, ...]
    sessions: Mapping[str, Any] = FrozenDict()
    display: bool = False


def trigger_key(on: object) -> Trigger:
    """``"start"`` or ``{kind: value}`` as a hashable key."""
    if on == "start":
        return ("start",)
    assert isinstance(on, Mapping)
    ((kind, value),) = on.items()
    return (str(kind), value)


def validate(script: object) -> Plan:
    """Check a script completely before anything runs (DSH_SCENARIO_*)."""
    errors = sorted(_validator().iter_errors(script), key=lambda e: list(e.absolute_path))
    if errors:
        from jsonschema.exceptions import best_match  # only to word an invalid script

        best = best_match(errors)
        assert best is not None
        raise _error(ErrorCode.SCENARIO_INVALID, _pointer(best.absolute_path), best.message)
    assert isinstance(script, Mapping)
    agent = script["agent"]
    options = agent.get("options", {})
    tools = {tool["name"] for tool in options.get("tools", ())}
    replies = []
    call_ids: set[str] = set()
    for i, reply in enumerate(script.get("replies", ())):
        for j, call in enumerate(reply.get("toolCalls", ())):
            where = f"/replies/{i}/toolCalls/{j}"
            if call["id"] in call_ids:
                raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/id", "duplicate tool call id")
            call_ids.add(call["id"])
            if call["name"] not in tools:
                raise _error(
                    ErrorCode.SCENARIO_UNKNOWN_TOOL,
                    f"{where}/name",
                    f"the agent has no tool {jsstr.quote(call['name'])}",
                )
        try:
            replies.append(validate_response(reply))
        except DshError as exc:
            raise _error(ErrorCode.SCENARIO_INVALID, f"/replies/{i}", exc.message) from None
    listeners = tuple(_listener(i, spec) for i, spec in enumerate(script.get("listeners", ())))
    steps = tuple(_step(i, spec) for i, spec in enumerate(script["steps"]))
    forked = {s.fields["child"] for s in steps if s.action == "fork"}
    for s in steps:
        if s.action == "mergeBack" and s.fields["child"] not in forked:
            raise _error(
                ErrorCode.SCENARIO_INVALID, f"/steps/{s.index}/child", "no fork step makes it"
            )
    for s in steps:
        where = f"/steps/{s.index}"
        if s.action == "prepare" and s.trigger[0] not in PREPARE_TRIGGERS:
            raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/on", "prepare runs on start or idle")
        if "prepared" in s.fields:
            k = s.fields["prepared"]
            if not (k < s.index and steps[k].action == "prepare"):
                raise _error(
                    ErrorCode.SCENARIO_INVALID, f"{where}/prepared", "no earlier prepare step"
                )
    seed_turns = last_turn_number(events_from_json(agent.get("seed", [])))
    _check_reachable(steps, replies, call_ids, seed_turns)
    sessions = FrozenDict(script.get("sessions", {}))
    return Plan(agent, listeners, tuple(replies), steps, sessions, bool(script.get("display")))


def _listener(index: int, spec: Mapping[str, Any]) -> tuple[Mapping[str, Any], Listener]:
    where = f"/listeners/{index}"
    event = spec.get("event", "prompt-submit")
    if "submission" in spec and event != "prompt-submit":
        raise _error(ErrorCode.SCENARIO_INVALID, where, "submission is for prompt-submit")
    if "turn" in spec and event != "turn-stop":
        raise _error(ErrorCode.SCENARIO_INVALID, where, "turn is for turn-stop listeners")
    bare = {k: v for k, v in spec.items() if k not in {"submission", "turn"}}
    try:
        return spec, parse_listener(bare)
    except DshError as exc:
        raise _error(ErrorCode.SCENARIO_INVALID, where, exc.message) from None


def _step(index: int, spec: Mapping[str, Any]) -> Step:
    where = f"/steps/{index}"
    action = spec["do"]
    fields = {k: v for k, v in spec.items() if k not in {"on", "do"}}
    extra = sorted(set(fields) - FIELDS[action])
    if extra:
        raise _error(
            ErrorCode.SCENARIO_INVALID, f"{where}/{extra[0]}", f"{action} takes no {extra[0]}"
        )
    given = ("text" in fields) + ("content" in fields) + ("prepared" in fields)
    if action in MESSAGE_ACTIONS | {"prepare"} and given != 1:
        raise _error(ErrorCode.SCENARIO_INVALID, where, f"{action} needs content or text")
    if "prepared" in fields and "contexts" in fields:
        raise _error(ErrorCode.SCENARIO_INVALID, f"{where}/contexts", "prepared carries its own")
    missing = sorted(REQUIRED.get(action, frozenset()) - set(fields))
    if missing:
        raise _error(ErrorCode.SCENARIO_INVALID, where, f"{action} needs {missing[0]}")
    return Step(index, trigger_key(spec.get("on", "start")), action, FrozenDict(fields))


def _check_reachable(
    steps: Sequence[Step], replies: Sequence[FrozenDict], call_ids: set[str], seed_turns: int
) -> None:
    """Reject triggers that can never fire, and hanging replies nothing ends."""
    messages = sum(1 for s in steps if s.action in MESSAGE_ACTIONS | {"mergeBack"})
    prompts = sum(1 for s in steps if s.action in {"send", "steer"})
    for step in steps:
        where = f"/steps/{step.index}/on"
        kind = step.trigger[0]
        value: Any = step.trigger[-1]
        if kind == "request" and value > len(replies):
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"no reply {value} is scripted")
        if kind == "toolCall" and value not in call_ids:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, "no reply makes this tool call")
        if kind == "submit" and value > prompts:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"fewer than {value} prompts")
        if kind == "turnEnd" and not seed_turns < value <= seed_turns + messages:
            raise _error(ErrorCode.SCENARIO_UNREACHABLE, where, f"turn {value} cannot end here")
    for i, reply in enumerate(replies):
        if reply.get("hang") and not any(
            s.trigger == ("request", i + 1) and s.action in {"cancel", "dispose"} for s in steps
        ):
            raise _error(
                ErrorCode.SCENARIO_UNREACHABLE,
                f"/replies/{i}",
                "a hanging reply needs a cancel or dispose step on its request",
            )
