"""Source sessions read from their stored logs, in memory bounded by what is retained.

A stored log is JSON Lines (D-165): the session header, then every event in log order,
one JSON object per line, exactly the ``{header, events}`` a session is as data.  A read
streams the file once and parses, validates, folds and projects each event as
``session_from_json``, ``read_log`` and ``ReadOutcome.ok`` do -- so the outcome, error
messages included, is the one the same session gives as data -- but it keeps only what
retention reads: each surface node's envelope, and for each projected message its role,
checkpoint flag, UTF-8 length and the place of its line.  A text is read again from the
open file only when retention keeps the message.  Preparation's peak memory then follows
the retained bytes, not the size of the source (issue 15: the whole process stays under
twice the source text, where holding the source as strings alone is about twice it).

Logs are append-only (seed 000), so the bytes of a line never change once read; each
line's CRC is kept and checked when its text is read again, and the file stays open while
the read's outcome is in use, so a log deleted or replaced meanwhile changes nothing
(PREP-008).
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator, Mapping
from types import TracebackType
from typing import Any, Final, Protocol

from attrs import evolve

from dsh_conformance.model import jsstr
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.prepare import ReadOutcome
from dsh_conformance.model.projection import Role, project_event
from dsh_conformance.model.session import (
    SURFACE_TYPES,
    Event,
    SessionHeader,
    SurfaceFold,
)
from dsh_conformance.model.snapshot import SessionSnapshot

#: The read buffer of a stored log (a longer line is read whole).
_BLOCK: Final = 1 << 16


def write_log(path: str | os.PathLike[str], session: Mapping[str, Any]) -> None:
    """Store ``{header, events}`` as the JSON Lines of D-165 (``JSON.stringify`` of each)."""
    with open(path, "wb") as out:
        out.write(jsstr.stringify_bytes(session["header"], b"\n"))
        for event in session["events"]:
            out.write(jsstr.stringify_bytes(event, b"\n"))


class StoredItem:
    """A projected message whose text stays in its log until retention reads it."""

    __slots__ = ("_crc", "_log", "_offset", "_size", "_text", "checkpoint", "length", "role")

    def __init__(
        self,
        role: Role,
        checkpoint: bool,
        length: int,
        log: LogLines,
        place: tuple[int, int, int],
    ) -> None:
        self.role: Role = role
        self.checkpoint = checkpoint
        self.length = length
        self._log = log
        self._offset, self._size, self._crc = place
        self._text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            line = self._log.line(self._offset, self._size, self._crc)
            item = project_event(Event.from_json(jsstr.parse_bytes(line)))
            assert item is not None  # it projected to this message when the log was read
            self._text = item.text
        return self._text


class LogLines(Protocol):
    """Where ``read_lines`` reads a log: its header then events, one JSON text each, with
    the place of each; a text is read again by its place (adapters/large_request.py reads
    them from the spans of a request line)."""

    def lines(self) -> Iterator[tuple[int, bytes]]: ...
    def line(self, offset: int, size: int, crc: int) -> bytes: ...
    def not_json(self, number: int) -> ReadOutcome: ...


class _OpenLog:
    """One stored log, open for the lifetime of the store that read it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.fd = os.open(self.path, os.O_RDONLY)

    def line(self, offset: int, size: int, crc: int) -> bytes:
        data = os.pread(self.fd, size, offset)
        if len(data) != size or zlib.crc32(data) != crc:
            raise RuntimeError(
                f"stored log {self.path!r} changed under an open read: logs are append-only"
            )
        return data

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(offset, line without its newline) for every line, in one buffered pass (the
        stream reads from the start of the fd; ``line`` preads and moves no position)."""
        offset = 0
        with open(self.fd, "rb", buffering=_BLOCK, closefd=False) as stream:
            for line in stream:
                yield offset, line[:-1] if line.endswith(b"\n") else line
                offset += len(line)

    def not_json(self, number: int) -> ReadOutcome:
        return _invalid_log(self.path, f"line {number} is not JSON")

    def close(self) -> None:
        os.close(self.fd)


def _invalid_log(path: str, what: str) -> ReadOutcome:
    return ReadOutcome.failed(f"invalid stored log {path!r}: {what}")


def _read(log: _OpenLog) -> ReadOutcome:
    """One streaming read of *log* (see the module docstring)."""
    return read_lines(log, lambda: _invalid_log(log.path, "no header line"))


def read_lines(log: LogLines, empty: Callable[[], ReadOutcome]) -> ReadOutcome:
    """The read of a log given as lines (``empty()`` when it has none): parsed, validated,
    folded and projected as a session given as data is, keeping summaries only."""
    lines = log.lines()
    first = next(lines, None)
    if first is None:
        return empty()
    fold = SurfaceFold()
    # The projection of every node appended so far: (role, checkpoint, length) or None
    # (nothing projected) and the line's place, or the DshError projecting it raised
    # (raised only if the node is still on the surface at the end, as project() would).
    projected: dict[int, tuple[tuple[Role, bool, int] | None, tuple[int, int, int]] | DshError]
    projected = {}
    last_seq: int | None = None
    number = 1
    try:
        header = SessionHeader.from_json(jsstr.parse_bytes(first[1]))
        for offset, line in lines:
            number += 1
            event = Event.from_json(jsstr.parse_bytes(line))
            fold.feed(evolve(event, data=None))  # the fold reads the envelope only
            last_seq = event.seq
            if event.type not in SURFACE_TYPES:
                continue
            try:
                item = project_event(event)
            except DshError as exc:
                projected[event.seq] = exc
                continue
            summary = None if item is None else (item.role, item.checkpoint, item.length)
            projected[event.seq] = (summary, (offset, len(line), zlib.crc32(line)))
    except DshError as exc:
        return ReadOutcome.failed(f"invalid session surface: {exc.message}")
    except ValueError:
        return log.not_json(number)
    items: list[StoredItem] = []
    for node in fold.nodes:
        entry = projected[node.seq]
        if isinstance(entry, DshError):
            return ReadOutcome.failed(f"invalid session surface: {entry.message}")
        summary, place = entry
        if summary is not None:
            items.append(StoredItem(*summary, log, place))
    snapshot = SessionSnapshot(header, last_seq, tuple(fold.nodes))
    return ReadOutcome(0.0, snapshot, tuple(items))


class StoredLogs:
    """A store of session logs on disk, by session id; a context manager that closes the
    files its reads keep open.  ``read`` is a ``prepare`` reader (model/prepare.py)."""

    def __init__(self, paths: Mapping[str, str | os.PathLike[str]]) -> None:
        self.paths = {jsstr.canonical(sid): path for sid, path in paths.items()}
        self._open: list[_OpenLog] = []

    def read(self, sid: str) -> ReadOutcome:
        path = self.paths.get(sid)
        if path is None:
            return ReadOutcome.failed(f'session "{sid}" not found')
        try:
            log = _OpenLog(path)
        except OSError as exc:
            return ReadOutcome.failed(f"cannot open stored log {os.fspath(path)!r}: {exc}")
        self._open.append(log)
        return _read(log)

    def close(self) -> None:
        while self._open:
            self._open.pop().close()

    def __enter__(self) -> StoredLogs:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
