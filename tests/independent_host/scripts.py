"""Reject a malformed scenario or side-scenario script before anything runs.

Each error message starts with the JSON Pointer of the offending item (docs/scenario.md,
"Bad scripts"): the schema first (DSH_SCENARIO_INVALID), then tools the agent lacks
(DSH_SCENARIO_UNKNOWN_TOOL), then triggers that can never fire (DSH_SCENARIO_UNREACHABLE).
"""

from __future__ import annotations

from typing import Any

from tests.independent_host.errors import HostError

INVALID = "DSH_SCENARIO_INVALID"
UNREACHABLE = "DSH_SCENARIO_UNREACHABLE"
UNKNOWN_TOOL = "DSH_SCENARIO_UNKNOWN_TOOL"
SUBMIT_KINDS = {"pass", "allow", "rewrite", "add-contexts", "drop-contexts", "block", "throw"}
STOP_KINDS = {"stop", "none"}
ACTIONS = {"send", "steer", "inject", "cancel", "dispose", "fork", "mergeBack", "prepare"}
SIDE_ACTIONS = {"send", "steer", "cancel", "dispose", "fork", "askHandback", "mergeBack"}


def _bad(pointer: str, message: str, code: str = INVALID) -> HostError:
    return HostError(code, f"{pointer}: {message}")


def _int(value: Any, low: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _only(obj: Any, pointer: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise _bad(pointer, "must be an object")
    for key in obj:
        if key not in allowed:
            raise _bad(f"{pointer}/{key}", "is not allowed here")
    return obj


def check_agent(agent: Any, pointer: str) -> dict[str, Any]:
    _only(agent, pointer, {"id", "header", "seed", "options"})
    if not isinstance(agent.get("id"), str):
        raise _bad(f"{pointer}/id", "must be a string")
    if "header" in agent and not isinstance(agent["header"], dict):
        raise _bad(f"{pointer}/header", "must be an object")
    if "seed" in agent and not isinstance(agent["seed"], list):
        raise _bad(f"{pointer}/seed", "must be an array")
    options = _only(
        agent.get("options", {}),
        f"{pointer}/options",
        {"provider", "model", "persona", "sections", "tools"},
    )
    for name in ("provider", "model", "persona"):
        if name in options and not isinstance(options[name], str):
            raise _bad(f"{pointer}/options/{name}", "must be a string")
    sections = options.get("sections", [])
    if not isinstance(sections, list):
        raise _bad(f"{pointer}/options/sections", "must be an array")
    for i, section in enumerate(sections):
        here = f"{pointer}/options/sections/{i}"
        if not isinstance(section, dict) or not isinstance(section.get("text"), str):
            raise _bad(here, "needs a string text")
        if "order" in section and not isinstance(section["order"], int):
            raise _bad(f"{here}/order", "must be an integer")
    tools = options.get("tools", [])
    if not isinstance(tools, list):
        raise _bad(f"{pointer}/options/tools", "must be an array")
    for i, tool in enumerate(tools):
        here = f"{pointer}/options/tools/{i}"
        _only(tool, here, {"name", "description", "parameters", "result", "isError"})
        if not isinstance(tool.get("name"), str):
            raise _bad(f"{here}/name", "must be a string")
        if "result" in tool and not isinstance(tool["result"], list):
            raise _bad(f"{here}/result", "must be content blocks")
    return options


def check_replies(replies: Any, pointer: str, seen_calls: dict[str, str]) -> list[dict[str, Any]]:
    if not isinstance(replies, list):
        raise _bad(pointer, "must be an array")
    for i, reply in enumerate(replies):
        here = f"{pointer}/{i}"
        _only(reply, here, {"text", "toolCalls", "error", "code", "hang", "partial"})
        shapes = [k for k in ("text", "toolCalls", "error", "hang") if k in reply]
        if "text" in reply and "toolCalls" in reply:
            shapes.remove("text")
        if len(shapes) != 1:
            raise _bad(here, "a reply is one of text, toolCalls, error or hang")
        if "hang" in reply and reply["hang"] is not True:
            raise _bad(f"{here}/hang", "must be true")
        if "partial" in reply and shapes[0] not in ("hang", "error"):
            raise _bad(f"{here}/partial", "only beside hang or error")
        if "code" in reply and "error" not in reply:
            raise _bad(f"{here}/code", "only beside error")
        for key in ("text", "error", "code", "partial"):
            if key in reply and not isinstance(reply[key], str):
                raise _bad(f"{here}/{key}", "must be a string")
        calls = reply.get("toolCalls", [])
        if "toolCalls" in reply and (not isinstance(calls, list) or not calls):
            raise _bad(f"{here}/toolCalls", "must be a non-empty array")
        for j, call in enumerate(calls):
            at = f"{here}/toolCalls/{j}"
            _only(call, at, {"id", "name", "arguments"})
            if not isinstance(call.get("id"), str) or not isinstance(call.get("name"), str):
                raise _bad(at, "a tool call needs a string id and name")
            if call["id"] in seen_calls:
                raise _bad(f"{at}/id", f"duplicate tool call id {call['id']!r}")
            seen_calls[call["id"]] = at
    return replies


def check_tools(replies: list[dict[str, Any]], pointer: str, options: dict[str, Any]) -> None:
    names = {tool["name"] for tool in options.get("tools", [])}
    for i, reply in enumerate(replies):
        for j, call in enumerate(reply.get("toolCalls", [])):
            if call["name"] not in names:
                raise _bad(f"{pointer}/{i}/toolCalls/{j}/name", "no such tool", UNKNOWN_TOOL)


def _trigger(on: Any, pointer: str, side: bool) -> Any:
    if on == "start":
        return "start"
    if not isinstance(on, dict) or len(on) == 0:
        raise _bad(pointer, "unknown trigger")
    if side:
        if "idle" in on and set(on) == {"idle"} and _int(on["idle"], 1):
            return ("idle", on["idle"])
        if "request" in on and set(on) <= {"request", "session"} and _int(on["request"], 1):
            session = on.get("session", "parent")
            if session not in ("parent", "child"):
                raise _bad(f"{pointer}/session", "is parent or child")
            return ("request", session, on["request"])
        raise _bad(pointer, "unknown trigger")
    if len(on) != 1:
        raise _bad(pointer, "unknown trigger")
    ((name, value),) = on.items()
    if name == "toolCall" and isinstance(value, str):
        return (name, value)
    if name in ("submit", "request", "turnEnd", "idle") and _int(value, 1):
        return (name, value)
    raise _bad(pointer, "unknown trigger")


def _content(step: dict[str, Any], here: str) -> None:
    if "content" not in step and "text" not in step and "prepared" not in step:
        raise _bad(here, "needs content or text")
    if "text" in step and not isinstance(step["text"], str):
        raise _bad(f"{here}/text", "must be a string")


STEP_KEYS = {
    "on",
    "do",
    "target",
    "references",
    "prepared",
    "child",
    "cap",
    "text",
    "content",
    "source",
    "contexts",
    "meta",
    "cause",
}


def check_scenario(script: Any) -> list[Any]:
    """Validate a scenario.run script; answer each step's trigger key."""
    _only(script, "", {"agent", "display", "listeners", "sessions", "replies", "steps"})
    options = check_agent(script.get("agent"), "/agent")
    listeners = script.get("listeners", [])
    if not isinstance(listeners, list):
        raise _bad("/listeners", "must be an array")
    for i, lis in enumerate(listeners):
        here = f"/listeners/{i}"
        _only(
            lis,
            here,
            {
                "event",
                "kind",
                "submission",
                "turn",
                "content",
                "additionalContexts",
                "contexts",
                "position",
                "reason",
                "message",
                "code",
            },
        )
        event = lis.get("event", "prompt-submit")
        kinds = (
            SUBMIT_KINDS
            if event == "prompt-submit"
            else STOP_KINDS
            if event == "turn-stop"
            else None
        )
        if kinds is None or lis.get("kind") not in kinds:
            raise _bad(here, f"a {event} listener cannot be {lis.get('kind')!r}")
        if lis.get("position", "prepend") not in ("prepend", "append"):
            raise _bad(f"{here}/position", "is prepend or append")
        for key in ("submission", "turn"):
            if key in lis and not _int(lis[key], 1):
                raise _bad(f"{here}/{key}", "must be a positive integer")
        if lis["kind"] == "rewrite" and not isinstance(lis.get("content"), list):
            raise _bad(f"{here}/content", "a rewrite needs content")
        if lis["kind"] == "add-contexts" and not isinstance(lis.get("contexts"), list):
            raise _bad(f"{here}/contexts", "add-contexts needs contexts")
    sessions = script.get("sessions", {})
    if not isinstance(sessions, dict):
        raise _bad("/sessions", "must be an object")
    calls: dict[str, str] = {}
    replies = check_replies(script.get("replies", []), "/replies", calls)
    steps = script.get("steps")
    if not isinstance(steps, list):
        raise _bad("/steps", "must be an array")
    keys = []
    for i, step in enumerate(steps):
        here = f"/steps/{i}"
        _only(step, here, STEP_KEYS)
        action = step.get("do")
        if action not in ACTIONS:
            raise _bad(f"{here}/do", f"unknown action {action!r}")
        key = _trigger(step.get("on", "start"), f"{here}/on", side=False)
        keys.append(key)
        if action in ("send", "steer", "inject"):
            _content(step, here)
        if action == "inject" and ("contexts" in step or "prepared" in step):
            raise _bad(f"{here}/contexts", "an inject carries no contexts")
        if "prepared" in step:
            k = step["prepared"]
            if not _int(k) or k >= i or steps[k].get("do") != "prepare":
                raise _bad(f"{here}/prepared", "must name an earlier prepare step")
        if action == "prepare":
            if "text" not in step and "content" not in step:
                raise _bad(here, "needs content or text")
            if not isinstance(step.get("references"), list):
                raise _bad(f"{here}/references", "must be an array")
            if key != "start" and key[0] != "idle":
                raise _bad(f"{here}/on", "a prepare step runs on start or idle only")
        if action in ("fork", "mergeBack"):
            raise HostError(
                "DSH_UNSUPPORTED_OPERATION", f"{here}: side sessions need the side capability"
            )
    check_tools(replies, "/replies", options)
    _reachable(script, replies, steps, keys, calls)
    return keys


def _reachable(
    script: dict[str, Any],
    replies: list[Any],
    steps: list[Any],
    keys: list[Any],
    calls: dict[str, str],
) -> None:
    seed_turns = 0
    for event in script["agent"].get("seed", []):
        if isinstance(event, dict) and event.get("type") == "turn/start":
            data = event.get("data")
            turn = data.get("turn") if isinstance(data, dict) else None
            seed_turns = (
                max(seed_turns + 1, turn)
                if isinstance(turn, int) and _int(turn)
                else seed_turns + 1
            )
    prompts = sum(1 for s in steps if s.get("do") in ("send", "steer"))
    turns = prompts + sum(1 for s in steps if s.get("do") in ("inject", "mergeBack"))
    for i, key in enumerate(keys):
        here = f"/steps/{i}/on"
        if key == "start":
            continue
        name, value = key
        if name == "request" and value > len(replies):
            raise _bad(here, f"there is no reply {value}", UNREACHABLE)
        if name == "toolCall" and value not in calls:
            raise _bad(here, f"no reply calls {value!r}", UNREACHABLE)
        if name == "submit" and value > prompts:
            raise _bad(here, f"the script submits at most {prompts} prompts", UNREACHABLE)
        if name == "turnEnd" and not seed_turns < value <= seed_turns + turns:
            raise _bad(here, f"turn {value} cannot end in this run", UNREACHABLE)
    for n, reply in enumerate(replies, start=1):
        if reply.get("hang") and not any(
            key == ("request", n) and steps[i].get("do") in ("cancel", "dispose")
            for i, key in enumerate(keys)
        ):
            raise _bad(
                f"/replies/{n - 1}",
                "a hanging reply needs a cancel or dispose on its request",
                UNREACHABLE,
            )


def check_side(script: Any) -> list[Any]:
    """Validate a side.scenario.run script; answer each step's trigger key."""
    _only(script, "", {"parent", "child", "replies", "steps"})
    options = check_agent(script.get("parent"), "/parent")
    child = script.get("child")
    if not isinstance(child, str):
        raise _bad("/child", "must be a string")
    if child == script["parent"]["id"]:
        raise _bad("/child", "the side session needs an id of its own")
    replies = _only(script.get("replies", {}), "/replies", {"parent", "child"})
    calls: dict[str, str] = {}
    lists = {
        who: check_replies(replies.get(who, []), f"/replies/{who}", calls)
        for who in ("parent", "child")
    }
    steps = script.get("steps")
    if not isinstance(steps, list):
        raise _bad("/steps", "must be an array")
    keys = []
    for i, step in enumerate(steps):
        here = f"/steps/{i}"
        _only(step, here, {"on", "do", "session", "text", "cap"})
        if step.get("do") not in SIDE_ACTIONS:
            raise _bad(f"{here}/do", f"unknown action {step.get('do')!r}")
        if step.get("session", "parent") not in ("parent", "child"):
            raise _bad(f"{here}/session", "is parent or child")
        if step["do"] in ("send", "steer") and not isinstance(step.get("text"), str):
            raise _bad(f"{here}/text", "must be a string")
        if "cap" in step and not (_int(step["cap"]) and 256 <= step["cap"] <= 65536):
            raise _bad(f"{here}/cap", "must be an integer in 256..65536")
        keys.append(_trigger(step.get("on", "start"), f"{here}/on", side=True))
    for who in ("parent", "child"):
        check_tools(lists[who], f"/replies/{who}", options)
    for i, key in enumerate(keys):
        if key != "start" and key[0] == "request" and key[2] > len(lists[key[1]]):
            raise _bad(f"/steps/{i}/on", f"{key[1]} has no reply {key[2]}", UNREACHABLE)
    for who in ("parent", "child"):
        for n, reply in enumerate(lists[who], start=1):
            if reply.get("hang") and not any(
                key == ("request", who, n)
                and steps[i]["do"] in ("cancel", "dispose")
                and steps[i].get("session", "parent") == who
                for i, key in enumerate(keys)
            ):
                raise _bad(
                    f"/replies/{who}/{n - 1}",
                    "a hanging reply needs a cancel or dispose on its request",
                    UNREACHABLE,
                )
    return keys
