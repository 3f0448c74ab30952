"""The stdio loop: one JSON request per line in, one reply per line out, in order."""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.independent_host import codec, prepare, retain, scenario, sidechat, surface
from tests.independent_host.errors import HostError
from tests.independent_host.jsvalue import normalize, stringify

CAPABILITIES = [
    "uri",
    "mention",
    "serialization",
    "projection",
    "retention",
    "retention.truncate",
    "prepare",
    "candidates",
    "scenario",
    "side.scenario",
]
ARG = "DSH_INVALID_ARGUMENT"


def _string(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str):
        raise HostError(ARG, f"{name} must be a string")
    return normalize(value)


def _snapshot(args: dict[str, Any]) -> dict[str, Any]:
    """A surface read: either fold the given log, or take the given snapshot as read."""
    if "snapshot" in args:
        snap = args["snapshot"]
        if not isinstance(snap, dict) or not isinstance(snap.get("events"), list):
            raise HostError(ARG, "snapshot needs {session, capturedThroughSeq, events}")
        if not isinstance(snap.get("session"), dict) or not isinstance(
            snap["session"].get("id"), str
        ):
            raise HostError(ARG, "snapshot.session needs a string id")
        return snap
    if "session" in args:
        return surface.fold(args["session"])
    raise HostError(ARG, "give a session or a snapshot")


def _tag_safe(args: dict[str, Any]) -> str:
    if "value" not in args:
        raise HostError("DSH_JSON_NOT_SERIALIZABLE", "undefined has no JSON text")
    return stringify(args["value"], tag_safe=True)


def _retain(args: dict[str, Any]) -> dict[str, Any]:
    cap = args.get("maxBytes")
    cap = 65536 if cap is None else cap
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 1:
        raise HostError(prepare.CONFIG, "maxBytes must be a positive integer")
    snap = _snapshot(args)
    label = args.get("label", snap["session"]["id"])
    if not isinstance(label, str):
        raise HostError(codec.INVALID, "label must be a string")
    kept, items = prepare.retain_source(snap, normalize(label), cap)
    header = snap["session"]
    cwd = header.get("cwd")
    return {
        "data": {
            "sessionId": header["id"],
            "label": normalize(label),
            "cwd": cwd if isinstance(cwd, str) else None,
            "capturedThroughSeq": snap.get("capturedThroughSeq"),
            "conversation": [{"role": m.role, "text": m.text} for m in kept.messages],
        },
        "stats": prepare.stats(items, kept),
        "source": prepare.source_record(header["id"], kept),
    }


def _truncate(args: dict[str, Any]) -> dict[str, Any]:
    cap = args.get("maxBytes")
    if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0:
        raise HostError(ARG, "maxBytes must be a non-negative integer")
    return retain.truncate(_string(args, "text"), cap)


def _label(args: dict[str, Any]) -> str | None:
    return None if args.get("label") is None else _string(args, "label")


OPS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "handshake": lambda a: {
        "protocol": 2 if a.get("protocol", 2) >= 2 else 1,
        "implementation": {"name": "independent-host", "language": "python", "version": "0.1.0"},
        "capabilities": CAPABILITIES,
    },
    "reset": lambda a: None,
    "shutdown": lambda a: None,
    "uri.encode": lambda a: codec.encode_uri(_string(a, "sessionId")),
    "uri.decode": lambda a: codec.decode_uri(a.get("uri")),
    "mention.format": lambda a: codec.format_mention(_string(a, "sessionId"), _label(a)),
    "mention.parse": lambda a: codec.parse_mentions(_string(a, "text")),
    "json.tagSafe": _tag_safe,
    "session.surface": lambda a: surface.fold(a.get("session")),
    "projection.project": lambda a: surface.project(_snapshot(a)),
    "retention.retain": _retain,
    "retention.truncate": _truncate,
    "prepare": prepare.prepare,
    "candidates.list": prepare.candidates,
    "scenario.run": scenario.run,
    "side.scenario.run": sidechat.run,
}
_ID = re.compile(r'"id"\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")')


def answer(line: str) -> tuple[str, bool]:
    """The reply line for one request line, and whether to stop after it."""
    try:
        request = json.loads(line)
    except RecursionError:
        found = _ID.search(line)
        rid = json.loads(found.group(1)) if found else None
        return _error(rid, ARG, "the request is nested too deeply to read"), False
    except ValueError:
        return _error(None, ARG, "the request is not JSON"), False
    if not isinstance(request, dict):
        return _error(None, ARG, "a request is a JSON object"), False
    rid, op, args = request.get("id"), request.get("op"), request.get("args")
    args = args if isinstance(args, dict) else {}
    run = OPS.get(op) if isinstance(op, str) else None
    if run is None:
        return _error(rid, "DSH_UNSUPPORTED_OPERATION", f"unknown operation {op!r}"), False
    try:
        result = run(args)
    except HostError as exc:
        return _error(rid, exc.code, exc.message), False
    except RecursionError:
        return _error(rid, ARG, "the arguments are nested too deeply"), False
    return '{"id":' + stringify(rid) + ',"result":' + stringify(result) + "}", op == "shutdown"


def _error(rid: Any, code: str, message: str) -> str:
    return stringify({"id": rid, "error": {"code": code, "message": message}})


def serve() -> None:
    stdin = sys.stdin.buffer
    out = sys.stdout.buffer
    for raw in stdin:
        line = raw.decode("utf-8", "surrogateescape").strip()
        if not line:
            continue
        reply, stop = answer(line)
        out.write(reply.encode("utf-8") + b"\n")
        out.flush()
        if stop:
            break


def main() -> int:
    """Serve on a thread with a deep stack: JSON nested thousands deep is still a value."""
    sys.setrecursionlimit(60000)
    threading.stack_size(512 * 1024 * 1024)
    worker = threading.Thread(target=serve)
    worker.start()
    worker.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
