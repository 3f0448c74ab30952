"""A large ``prepare`` request answered from its spooled line (issue 44, D-491, D-485).

Over the subprocess protocol a prepare request is one JSON line.  Parsed whole, its
source sessions are Python objects before preparation starts (two bytes a character for
CJK text, and every event's dictionaries): more than twice the text.  A line of
``serve.LARGE_LINE`` bytes or more that asks the reference model's own ``prepare`` is
spooled to an anonymous file as it arrives (adapters/line_spool.py), never held whole:
one scan of the spool finds the span of every session's header and events
without parsing them, and a read of a session goes through ``stored.read_lines``, as a
stored log does (D-165): each event parsed, checked, folded and projected in turn, only a
summary kept, and only the texts retention keeps read again from the spool by offset.  Every
other part of the request is parsed as the wire parser parses it, with the same parser
(``jsstr.parse_bytes``), and the reply is the data path's, byte for byte.

Anything this path does not take goes to the data path, which answers it as it always
did: another op or adapter, a server subclass, faults, a session that is not an object
with ``header`` and an ``events`` array, a duplicate key on the way to the events, a line
that is not JSON (every span is parsed, unread sessions' events after preparation), or
any unexpected error; it reads the spooled line back whole and parses it as ever.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from dsh_conformance.adapters.line_spool import NotServed as _NotServed
from dsh_conformance.adapters.line_spool import Scan, Spool

if TYPE_CHECKING:
    from dsh_conformance.adapters.serve import Server
    from dsh_conformance.model.prepare import ReadOutcome


def answer_line(server: Server, prefix: bytes, base: type[Server]) -> bytes:
    """Read the rest of the long line *prefix* begins into a spool (adapters/line_spool.py),
    answer it, and return what followed its newline (the serve loop splits and answers
    that as usual).

    *base* is the serve loop's own ``Server`` class (under ``python -m`` it is
    ``__main__``'s, not the package module's)."""
    spool, rest = Spool.receive(server.stdin_fd, prefix)
    try:
        reply = _answer(server, base, spool)
        if reply is None:
            server.handle_lines([spool.whole()])
        else:
            server.pending.append(reply)
    finally:
        spool.close()
    server.flush()
    return rest


def _answer(server: Server, base: type[Server], spool: Spool) -> bytes | None:
    """The encoded reply to the line in *spool*, or None where the data path must answer
    it."""
    from dsh_conformance.adapters import serve
    from dsh_conformance.adapters.contract import ImplementationError
    from dsh_conformance.adapters.reference import ReferenceAdapter, prepare_ops
    from dsh_conformance.model.errors import DshError

    cls, adapter = type(server), server.adapter
    if (
        # a subclass that answers lines otherwise (fault injection) sees every line
        (cls.handle_lines, cls.handle_line, cls.dispatch, cls.encode)
        != (base.handle_lines, base.handle_line, base.dispatch, base.encode)
        or type(adapter) is not ReferenceAdapter
        or adapter._handlers.get("prepare") is not prepare_ops._prepare
    ):
        return None
    try:
        request = _Request(Scan(spool))
        if request.op != "prepare" or type(request.id) not in serve._ID_TYPES:
            return None
        store = _SpanStore(request)
        try:
            result = prepare_ops.prepare_with(request.args, lambda args: store.read)
        except DshError as exc:  # what ReferenceAdapter.call and the server make of it
            reply = serve._failure(request.id, ImplementationError(exc.code, exc.message))
        else:
            reply = {"id": request.id, "result": result}
        store.check_unread()  # the data path parses the whole line before anything
    except Exception:
        return None
    return server.encode(reply)


class _Session:
    """One source session of the request: its header's span and its events' spans."""

    def __init__(self, header: tuple[int, int], events: array[int]) -> None:
        self.header = header
        self.events = events
        self.parsed = False  # every event span parsed once (by a read or by check_unread)


class _Request:
    """A request line, its sessions' events left as spans."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        top, end = scan.members(scan.skip(0), self._top)
        if scan.skip(end) != scan.size or not isinstance(top.get("args"), dict):
            raise _NotServed
        self.id = self._value(top, "id")
        self.op = self._value(top, "op")
        spans = top["args"]
        sessions = spans.pop("sessions", None)
        if not isinstance(sessions, dict):
            raise _NotServed  # no sessions, or not an object: nothing to stream
        self.args = {key: scan.parse(*span) for key, span in spans.items()}
        if self.args.get("faults") not in (None, {}):
            raise _NotServed  # the fault store's virtual time: the data path
        self.sessions: dict[str, _Session] = sessions
        for key in top.keys() - {"id", "op", "args"}:
            scan.parse(*top[key])  # ignored, but the line must be JSON

    def _value(self, top: Mapping[str, Any], key: str) -> Any:
        return self.scan.parse(*top[key]) if key in top else None

    def _top(self, key: str, start: int) -> tuple[Any, int] | None:
        return self.scan.members(start, self._args) if key == "args" else None

    def _args(self, key: str, start: int) -> tuple[Any, int] | None:
        return self.scan.members(start, self._session) if key == "sessions" else None

    def _session(self, key: str, start: int) -> tuple[Any, int]:
        scan = self.scan
        parts, end = scan.members(start, self._events)
        events, header = parts.pop("events", None), parts.pop("header", None)
        if not isinstance(events, array) or header is None:
            raise _NotServed  # session_from_json's error: the data path raises it
        for span in parts.values():
            scan.parse(*span)  # ignored by a read, but the line must be JSON
        return _Session(header, events), end

    def _events(self, key: str, start: int) -> tuple[Any, int] | None:
        return self.scan.elements(start) if key == "events" else None


class _SpanLog:
    """A session's spans as the lines of a log (``stored.LogLines``)."""

    def __init__(self, scan: Scan, session: _Session) -> None:
        self.scan = scan
        self.session = session

    def lines(self) -> Iterator[tuple[int, bytes]]:
        scan, session = self.scan, self.session
        yield session.header[0], scan.bytes(*session.header)
        spans = session.events
        for i in range(0, len(spans), 2):
            yield spans[i], scan.bytes(spans[i], spans[i + 1])
        session.parsed = True

    def line(self, offset: int, size: int, crc: int) -> bytes:
        data = self.scan.spool.read(offset, offset + size)  # by offset, as a stored log
        assert zlib.crc32(data) == crc  # the line is this process's own bytes
        return data

    def not_json(self, number: int) -> ReadOutcome:
        raise _NotServed  # the data path: the line is not JSON


class _SpanStore:
    """``FaultStore`` without faults, reading sessions from their spans."""

    def __init__(self, request: _Request) -> None:
        self.request = request

    def read(self, sid: str) -> ReadOutcome:
        from dsh_conformance.model.prepare import ReadOutcome
        from dsh_conformance.model.stored import read_lines

        session = self.request.sessions.get(sid)
        if session is None:
            return ReadOutcome.failed(f'session "{sid}" not found', 0.0)
        log = _SpanLog(self.request.scan, session)
        return read_lines(log, lambda: ReadOutcome.failed("no header", 0.0))

    def check_unread(self) -> None:
        """Parse every header and event no read parsed (the data path parses the whole
        line)."""
        scan = self.request.scan
        for session in self.request.sessions.values():
            if not session.parsed:
                scan.parse(*session.header)
                spans = session.events
                for i in range(0, len(spans), 2):
                    scan.parse(spans[i], spans[i + 1])
