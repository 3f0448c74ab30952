"""Reference operations for snapshot preparation: surface, projection, retention, prepare,
candidates (spec/schemas/ops/preparation.json).

Source sessions travel as data (``{"<id>": {header, events}}``) and a fault-injecting store
turns ``faults`` into virtual-time read outcomes: ``never``, ``fail``, ``delay`` and
``mutateAfterRead`` (a later append/compaction, deletion or replacement of the source that
must not reach the prepared context).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.model import candidates, headtail, jsstr, projection, retention
from dsh_conformance.model.config import ReferenceConfig
from dsh_conformance.model.errors import DshError, ErrorCode
from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.prepare import NEVER, Cancel, Reader, ReadOutcome, prepare
from dsh_conformance.model.projection import project
from dsh_conformance.model.retention import (
    DEFAULT_MAX_REFERENCE_BYTES,
    retain,
    retain_projected,
)
from dsh_conformance.model.session import Event, SessionLog, is_safe_int
from dsh_conformance.model.snapshot import (
    SessionSnapshot,
    project_json,
    read_log,
    session_from_json,
)


def _bad(message: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, message)


def _arg(args: Mapping[str, Any], name: str) -> Any:
    if name not in args:
        raise _bad(f"missing argument {name!r}")
    return args[name]


def _snapshot(args: Mapping[str, Any]) -> SessionSnapshot:
    """``snapshot`` (taken as given) or ``session`` (folded here).  Both callers only read
    it and return fresh values, so a snapshot's events are borrowed, not frozen."""
    if "snapshot" in args:
        return SessionSnapshot.from_json(args["snapshot"], borrow=True)
    return read_log(session_from_json(_arg(args, "session")))


@op("session.surface", "projection")
def _surface(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return read_log(session_from_json(_arg(args, "session"))).to_json()


@op("projection.project", "projection")
def _project(state: State, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [item.to_json() for item in project(_snapshot(args).events)]


def _max_bytes(args: Mapping[str, Any]) -> int:
    value = args.get("maxBytes")
    value = DEFAULT_MAX_REFERENCE_BYTES if value is None else value
    if not is_safe_int(value, minimum=1):
        raise DshError(ErrorCode.INVALID_CONFIG, "maxBytes must be a positive safe integer")
    return int(value)


#: What the one pass of ``retention.retain`` stands for: the op's ``retain``, retention's
#: ``project`` and projection's ``project_event``, as this module found them.
_TWO_PASSES: Final = (retain, vars(retention)["project"], projection.project_event)


def _one_pass_stands() -> bool:
    """Whether the one pass still computes what the two passes would: none of the names
    it stands for replaced (tests/zoo's defects patch them; they then get the passes that
    call them, D-490)."""
    return (retain, vars(retention)["project"], projection.project_event) == _TWO_PASSES


@op("retention.retain", "retention")
def _retain(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    try:
        cap: int | None = _max_bytes(args)
    except DshError:
        cap = None
    if (
        "snapshot" in args
        and isinstance(args.get("label", ""), str)
        and cap is not None
        and _one_pass_stands()
    ):
        # Valid options: the snapshot's events checked and projected in one pass (issue 44,
        # D-490; an invalid option is raised after the snapshot's errors, as below).
        header, seq, projected = project_json(args["snapshot"])
        label = jsstr.canonical(args.get("label", header.id))
        result = retain_projected(header, seq, label, cap, projected)
    else:  # the general order: snapshot, label, cap, then projection errors
        snapshot = _snapshot(args)
        label = args.get("label", snapshot.session.id)
        if not isinstance(label, str):
            raise DshError(ErrorCode.INVALID_REFERENCE, "label must be a string")
        result = retain(snapshot, jsstr.canonical(label), _max_bytes(args))
    return {"data": result.data, "stats": result.stats.to_json(), "source": result.typed()}


@op("retention.truncate", "retention.truncate")
def _truncate(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    text = _arg(args, "text")
    max_bytes = _arg(args, "maxBytes")
    if not isinstance(text, str) or not is_safe_int(max_bytes):
        raise _bad("text must be a string and maxBytes a non-negative safe integer")
    short = headtail.truncate_with_notice(jsstr.canonical(text), max_bytes)
    return {"text": short.text, "omittedBytes": short.omitted, "fits": short.fits}


# --- the fault-injecting session store ---------------------------------------------------


def _time(value: object, what: str) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise _bad(f"{what} must be a non-negative number")
    return float(value)


class FaultStore:
    """Sessions given as data, read in virtual time with injected faults.

    A read observes the session as it is when the read starts; ``mutateAfterRead`` then
    changes the stored session (append events -- e.g. a compaction --, delete it, or
    replace it) before anything is rendered.
    """

    def __init__(self, sessions: object, faults: object) -> None:
        if not isinstance(sessions, Mapping):
            raise _bad("sessions must be an object of id -> {header, events}")
        if faults is None:
            faults = {}
        if not isinstance(faults, Mapping) or not all(
            isinstance(f, Mapping) for f in faults.values()
        ):
            raise _bad("faults must be an object of id -> fault")
        for fault in faults.values():
            if fault.get("kind") not in {"never", "fail", "delay", "mutateAfterRead"}:
                raise _bad(f"unknown fault kind {fault.get('kind')!r}")
        self.raw = {jsstr.canonical(k): v for k, v in sessions.items()}
        self.faults = {jsstr.canonical(k): v for k, v in faults.items()}
        self.logs: dict[str, SessionLog | None] = {}

    def _log(self, sid: str) -> SessionLog | None:
        if sid not in self.logs:
            self.logs[sid] = session_from_json(self.raw[sid]) if sid in self.raw else None
        return self.logs[sid]

    def read(self, sid: str) -> ReadOutcome:
        fault: Mapping[str, Any] = self.faults.get(sid, {})
        kind = fault.get("kind")
        if kind == "never":
            return ReadOutcome(NEVER)
        if kind == "fail":
            message = fault.get("message", "injected read failure")
            return ReadOutcome.failed(str(message), _time(fault.get("at"), "fail.at"))
        at = _time(fault.get("ms", fault.get("at")), "delay")
        try:
            log = self._log(sid)
        except DshError as exc:
            return ReadOutcome.failed(f"invalid session surface: {exc.message}", at)
        if log is None:
            return ReadOutcome.failed(f'session "{sid}" not found', at)
        outcome = ReadOutcome.ok(read_log(log), at)
        if kind == "mutateAfterRead":
            self._mutate(sid, log, fault)
        return outcome

    def _mutate(self, sid: str, log: SessionLog, fault: Mapping[str, Any]) -> None:
        try:
            for item in fault.get("append", ()):
                event = Event.from_json(item)
                log.append(
                    event.type,
                    thaw(event.data),
                    time=event.time,
                    surface_op=event.surface_op,
                    source_event_seqs=event.source_event_seqs,
                )
            if fault.get("delete"):
                self.logs[sid] = None
            if "replace" in fault:
                self.logs[sid] = session_from_json(fault["replace"])
        except DshError as exc:
            raise _bad(f"invalid mutateAfterRead fault: {exc.message}") from exc


def _cancel_at(value: object) -> Cancel:
    if value is None or value == "before":
        return value
    return _time(value, "cancelAt")


def _target(args: Mapping[str, Any]) -> tuple[str, str | None]:
    target = _arg(args, "target")
    if not isinstance(target, Mapping) or not isinstance(target.get("id"), str):
        raise _bad("target must be an object with a string id")
    cwd = target.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise _bad("target cwd must be a string")
    return jsstr.canonical(target["id"]), cwd


@op("prepare", "prepare")
def _prepare(state: State, args: Mapping[str, Any]) -> dict[str, Any]:
    return prepare_with(args, _fault_store)


def _fault_store(args: Mapping[str, Any]) -> Reader:
    return FaultStore(args.get("sessions", {}), args.get("faults")).read


def prepare_with(
    args: Mapping[str, Any], reader: Callable[[Mapping[str, Any]], Reader]
) -> dict[str, Any]:
    """The ``prepare`` op with its sessions read by ``reader(args)``, made where the op
    makes its store (after the target and reference checks): the served model reads a
    large request's sessions from the line's bytes (adapters/large_request.py, D-491)."""
    config = ReferenceConfig.from_json(args.get("config"))
    target_id, _ = _target(args)
    references = _arg(args, "references")
    if not isinstance(references, list | tuple):
        raise DshError(ErrorCode.INVALID_REFERENCE, "references must be an array")
    read = reader(args)
    run = prepare(
        target_id,
        _arg(args, "content"),
        references,
        read,
        config,
        _cancel_at(args.get("cancelAt")),
    )
    return run.to_json()


@op("candidates.list", "candidates")
def _candidates(state: State, args: Mapping[str, Any]) -> list[dict[str, Any]]:
    config = ReferenceConfig.from_json(args.get("config"))
    target_id, target_cwd = _target(args)
    limit = args.get("limit", config.candidate_limit)
    listed_at = (
        NEVER if args.get("listDelay") == "never" else _time(args.get("listDelay"), "listDelay")
    )
    cancel_at = _cancel_at(args.get("cancelAt"))
    if cancel_at == "before" or (cancel_at is not None and cancel_at <= listed_at):
        raise DshError(ErrorCode.CANCELLED, "candidate discovery was cancelled")
    if listed_at == NEVER:
        raise _bad("the session listing never settles and nothing cancels discovery")
    sessions = args.get("sessions", {})
    if not isinstance(sessions, Mapping):
        raise _bad("sessions must be an object of id -> {header, events}")
    records = []
    for data in sessions.values():
        log = session_from_json(data)
        records.append(candidates.SessionRecord(log.header, candidates.latest_title(log.events)))
    query = args.get("query", "")
    return [
        c.to_json()
        for c in candidates.list_candidates(target_id, target_cwd, records, query, limit)
    ]
