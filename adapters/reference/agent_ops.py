"""Reference operations for agents: inbox verbs, listeners, scripted model, stepped driver.

Every op but ``agent.create`` names its agent by id (= session id).  Arguments are JSON; a
JSON object ``{"$hostile": KIND}`` anywhere inside ``content``/``source``/``contexts``/
``meta``/``cause`` stands for a native value JSON cannot carry (``NaN``, ``Infinity``,
``-Infinity``, ``-0``, ``undefined``, ``cycle``, ``non-string-key``, ``bigint``,
``function``), so lossless-JSON rejection (INBOX-002) is testable over a pipe too (D-68).
Schemas: spec/schemas/ops/agent.json.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.model import jsstr
from dsh_conformance.model.agent import Agent
from dsh_conformance.model.display import display
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.session import SessionHeader, events_from_json
from dsh_conformance.model.system_prompt import AgentOptions

CAPABILITY: Final = "agent"
HOSTILE_KEY: Final = "$hostile"


def agents(state: State) -> dict[str, Agent]:
    """The adapter's live agents by id (shared with side_ops)."""
    registry: dict[str, Agent] = state.area("agent", dict)
    return registry


def _arg(args: Mapping[str, Any], name: str) -> Any:
    if name not in args:
        raise DshError(ErrorCode.INVALID_ARGUMENT, f"missing argument {name!r}")
    return args[name]


def get_agent(state: State, args: Mapping[str, Any]) -> Agent:
    agent_id = _arg(args, "agent")
    found = agents(state).get(agent_id) if isinstance(agent_id, str) else None
    if found is None:
        raise DshError(ErrorCode.AGENT_NOT_FOUND, f"no agent {agent_id!r}")
    return found


def _hostile(kind: object) -> object:
    if kind == "NaN":
        return float("nan")
    if kind == "Infinity":
        return float("inf")
    if kind == "-Infinity":
        return float("-inf")
    if kind == "-0":
        return -0.0
    if kind == "undefined":
        return jsstr.UNDEFINED
    if kind == "cycle":
        loop: list[object] = []
        loop.append(loop)
        return loop
    if kind == "non-string-key":
        return {1: "one"}
    if kind == "bigint":
        return 2**64
    if kind == "function":
        return len
    raise DshError(ErrorCode.INVALID_ARGUMENT, f"unknown hostile value {kind!r}")


def decode_hostile(value: Any) -> Any:
    """Replace every ``{"$hostile": KIND}`` marker by its native value (D-68)."""
    if isinstance(value, Mapping):
        if set(value) == {HOSTILE_KEY}:
            return _hostile(value[HOSTILE_KEY])
        return {k: decode_hostile(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode_hostile(v) for v in value]
    return value


def _opt(args: Mapping[str, Any], name: str) -> Any:
    return decode_hostile(args[name]) if name in args else None


@op("agent.create", CAPABILITY)
def _create(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    if "header" in args:
        header = SessionHeader.from_json({"id": args.get("id"), **args["header"]})
    else:
        agent_id = _arg(args, "id")
        if not isinstance(agent_id, str):
            raise DshError(ErrorCode.INVALID_ARGUMENT, "agent id must be a string")
        header = SessionHeader(agent_id)
    registry = agents(state)
    if header.id in registry:
        raise DshError(ErrorCode.INVALID_ARGUMENT, f"agent {header.id!r} already exists")
    seed = events_from_json(args.get("seed", []))
    agent = Agent(header, seed, AgentOptions.from_json(args.get("options")))
    registry[header.id] = agent
    return {"agent": agent.id}


@op("agent.send", CAPABILITY)
def _send(state: State, args: Mapping[str, Any]) -> None:
    get_agent(state, args).send(
        decode_hostile(_arg(args, "content")), _opt(args, "source"), _opt(args, "contexts")
    )


@op("agent.steer", CAPABILITY)
def _steer(state: State, args: Mapping[str, Any]) -> None:
    get_agent(state, args).steer(
        decode_hostile(_arg(args, "content")), _opt(args, "source"), _opt(args, "contexts")
    )


@op("agent.inject", CAPABILITY)
def _inject(state: State, args: Mapping[str, Any]) -> None:
    agent = get_agent(state, args)
    if "contexts" in args:
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            "inject() accepts no contexts: attached contexts belong to inbox messages",
        )
    meta = decode_hostile(args["meta"]) if "meta" in args else jsstr.UNDEFINED
    agent.inject(decode_hostile(_arg(args, "content")), _opt(args, "source"), meta)


@op("agent.cancel", CAPABILITY)
def _cancel(state: State, args: Mapping[str, Any]) -> None:
    get_agent(state, args).cancel(_opt(args, "cause"))


@op("agent.dispose", CAPABILITY)
def _dispose(state: State, args: Mapping[str, Any]) -> None:
    get_agent(state, args).dispose()


@op("agent.listen", CAPABILITY)
def _listen(state: State, args: Mapping[str, Any]) -> None:
    get_agent(state, args).listen(_arg(args, "listener"))


@op("agent.script", CAPABILITY)
def _script(state: State, args: Mapping[str, Any]) -> None:
    responses = _arg(args, "responses")
    if not isinstance(responses, list):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "responses must be an array")
    get_agent(state, args).script(responses)


@op("agent.step", CAPABILITY)
def _step(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"step": get_agent(state, args).step()}


@op("agent.run", CAPABILITY)
def _run(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    limit = args.get("maxSteps", 100_000)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise DshError(ErrorCode.INVALID_ARGUMENT, "maxSteps must be a positive integer")
    return {"steps": get_agent(state, args).run_until_idle(limit)}


@op("agent.state", CAPABILITY)
def _state(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return get_agent(state, args).state()


@op("agent.log", CAPABILITY)
def _log(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return get_agent(state, args).log.to_json()


@op("agent.requests", CAPABILITY)
def _requests(state: State, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    return get_agent(state, args).requests


@op("agent.notifications", CAPABILITY)
def _notifications(state: State, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    return get_agent(state, args).notifications


@op("agent.submissions", CAPABILITY)
def _submissions(state: State, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    return get_agent(state, args).submissions


def _settles_at(fault: object) -> int | None:
    """The virtual time a read with *fault* settles (None: never), per D-44."""
    if not isinstance(fault, Mapping):
        return 0
    if fault.get("kind") == "never":
        return None
    if fault.get("kind") == "delay":
        return int(fault.get("ms", 0))
    return int(fault.get("at", 0))


@op("agent.submit", "agent.submit")
def _submit(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    """The host flow after mention parsing: prepare, then send (or steer) with the
    prepared content and contexts -- or, when preparation fails or is cancelled, enqueue
    nothing and report the reads that settled after the cancellation (PREP-006, D-78)."""
    from dsh_conformance.adapters.reference.prepare_ops import _prepare

    agent = get_agent(state, args)
    verb = args.get("verb", "send")
    if verb not in ("send", "steer"):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "verb must be 'send' or 'steer'")
    prepare_args = _arg(args, "prepare")
    if not isinstance(prepare_args, Mapping):
        raise DshError(ErrorCode.INVALID_ARGUMENT, "prepare must be an object")
    try:
        prepared = _prepare(state, prepare_args)
    except DshError as exc:
        late: list[str] = []
        cancel_at = prepare_args.get("cancelAt")
        if exc.code == ErrorCode.CANCELLED and isinstance(cancel_at, int):
            faults = prepare_args.get("faults") or {}
            for ref in prepare_args.get("references") or ():
                sid = ref.get("sessionId") if isinstance(ref, Mapping) else None
                at = _settles_at(faults.get(sid)) if isinstance(faults, Mapping) else 0
                if isinstance(sid, str) and at is not None and at > cancel_at:
                    late.append(sid)
        return {"enqueued": False, "error": str(exc.code), "lateSettled": late}
    enqueue = agent.send if verb == "send" else agent.steer
    enqueue(prepared["content"], None, prepared["contexts"])
    return {"enqueued": True, "error": None, "lateSettled": []}


@op("agent.display", "agent.display")
def _display(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    """What a host shows: display content, compact source lists, a title (ENV-072, ENV-073)."""
    return display(get_agent(state, args).log.events)


@op("agent.system", CAPABILITY)
def _system(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"system": get_agent(state, args).system_prompt()}
