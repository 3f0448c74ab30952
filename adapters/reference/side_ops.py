"""Reference operations for side sessions: fork, frame, ask, merge back, gate, compact.

They act on the agent operations' registry (``agent_ops.agents``), so a child is driven,
inspected and disposed with the ordinary ``agent.*`` ops.  Schemas:
spec/schemas/ops/side.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.adapters.reference.agent_ops import agents
from dsh_conformance.model import side, side_compact
from dsh_conformance.model.errors import DshError, ErrorCode

CAPABILITY: Final = "side"
GATE: Final = "side.deny-gate"


def _arg(args: Mapping[str, Any], name: str) -> Any:
    if name not in args:
        raise DshError(ErrorCode.INVALID_ARGUMENT, f"missing argument {name!r}")
    return args[name]


def _flag(args: Mapping[str, Any], name: str, default: bool) -> bool:
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise DshError(ErrorCode.INVALID_ARGUMENT, f"{name} must be a boolean")
    return value


@op("side.fork", CAPABILITY)
def _fork(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    frame = _flag(args, "frame", True)
    return side.fork(
        agents(state), _arg(args, "parent"), child_id=args.get("child"), frame=frame
    ).to_json()


@op("side.frame", CAPABILITY)
def _frame(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"seq": side.frame(agents(state), _arg(args, "child"))}


@op("side.askHandback", CAPABILITY)
def _ask(state: State, args: Mapping[str, Any]) -> None:
    side.ask_handback(agents(state), _arg(args, "child"), args.get("cap"))


@op("side.mergeBack", CAPABILITY)
def _merge(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return side.merge_back(
        agents(state),
        _arg(args, "parent"),
        _arg(args, "child"),
        cap=args.get("cap"),
        text=args.get("text"),
    ).to_json()


@op("side.compact", CAPABILITY)
def _compact(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    summary = _arg(args, "summary")
    if not isinstance(summary, str):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "summary must be a string")
    agent = side.lookup(agents(state), _arg(args, "agent"))
    return {"seq": side_compact.compact(agent, summary)}


@op("side.gate", GATE)
def _gate(state: State, args: Mapping[str, Any]) -> None:
    side.gate(agents(state), _arg(args, "child"), _arg(args, "deny"))
