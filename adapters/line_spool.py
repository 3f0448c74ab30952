"""A long request line kept out of the process's memory, and the spans of its JSON values.

The served model's large ``prepare`` request (adapters/large_request.py, D-491) is one
line of tens of megabytes.  Held as bytes it is as large as its text again (issue 44:
1.07x of the whole process's 2.67x at 10,000 messages).  ``Spool.receive`` writes the
rest of the line, as it arrives, to an anonymous temporary file through one small
buffer, and everything after reads it back by offset (``os.pread``): the file's pages
are the kernel's page cache, not this process's memory.  It is never mapped, since
mapped pages a process touches count in its resident set (D-485).

``Scan`` finds where the JSON values of the spooled line begin and end without parsing
them, through one window of the file at a time (a value longer than the window widens it
until it fits), so what the scan holds is the window, not the line.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable
from typing import Any, Final

from dsh_conformance.model import jsstr

#: The buffer a long line is read into as it arrives, and the scan's window.
BLOCK: Final = 1 << 18
_WS: Final = re.compile(rb"[ \t\n\r]*")
_STRING: Final = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
#: What a container's depth is counted on: strings (skipped whole) and brackets; a lone
#: quote is a string the window cuts before its end.
_TOKEN: Final = re.compile(_STRING + rb'|[][{}]|"')
#: A scalar's span: a string, or everything up to the next delimiter (then parsed).
_SCALAR: Final = re.compile(_STRING + rb'|[^ \t\n\r,:\]}\[{"]+')
_OPEN: Final = frozenset(b"[{")
_QUOTE: Final = 0x22


class NotServed(Exception):
    """The scan cannot take the line (not the JSON it expects): the data path answers it."""


class Spool:
    """One request line in an anonymous temporary file, read back by offset."""

    def __init__(self) -> None:
        self.fd = _anonymous_file()
        self.size = 0

    @classmethod
    def of(cls, data: bytes) -> Spool:
        """A spool holding *data* (the line without its newline)."""
        spool = cls()
        spool._write(data)
        return spool

    @classmethod
    def receive(cls, fd: int, prefix: bytes) -> tuple[Spool, bytes]:
        """The line *prefix* begins, read from *fd* up to its newline or end of input (which
        ends a request too, docs/protocol.md), and the bytes read after its newline."""
        spool = cls.of(prefix)
        buffer = bytearray(BLOCK)
        view = memoryview(buffer)
        while True:
            got = os.readv(fd, [buffer])
            if not got:
                return spool, b""
            at = buffer.find(b"\n", 0, got)
            if at >= 0:
                spool._write(view[:at])
                return spool, bytes(view[at + 1 : got])
            spool._write(view[:got])

    def _write(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.fd, view)
            view = view[written:]
            self.size += written

    def read(self, start: int, end: int) -> bytes:
        """The bytes of the line from *start* to *end* (within it)."""
        data = os.pread(self.fd, end - start, start)
        while len(data) < end - start:  # a regular file reads short only at its end
            more = os.pread(self.fd, end - start - len(data), start + len(data))
            if not more:
                raise RuntimeError("the spooled request line ended early")
            data += more
        return data

    def whole(self) -> bytes:
        """The line as one bytes value (for the data path, which parses it whole)."""
        return self.read(0, self.size)

    def close(self) -> None:
        os.close(self.fd)


def _anonymous_file() -> int:
    """A new file with no name, open for reading and writing: ``O_TMPFILE`` in $TMPDIR or
    /tmp where the system has it (tempfile's own first choice, without importing it on
    the way to every long line), else ``tempfile.TemporaryFile``'s."""
    flag = getattr(os, "O_TMPFILE", 0)
    if flag:
        try:
            return os.open(
                os.environ.get("TMPDIR") or "/tmp", os.O_RDWR | os.O_CLOEXEC | flag, 0o600
            )
        except OSError:
            pass  # no such directory, or a file system without O_TMPFILE
    import tempfile

    with tempfile.TemporaryFile(buffering=0) as file:
        return os.dup(file.fileno())


class Scan:
    """Spans of JSON values in a spooled line, found without parsing them."""

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self.size = spool.size
        self.base = 0
        self.window = b""

    def _load(self, pos: int, need: int = 0) -> None:
        self.base = pos
        self.window = self.spool.read(pos, min(pos + max(need, BLOCK), self.size))

    def _local(self, pos: int) -> int:
        """*pos* in the window, which is moved to begin there if it does not hold it."""
        i = pos - self.base
        if 0 <= i < len(self.window):
            return i
        self._load(pos)
        return 0

    def _ends(self) -> bool:
        """Whether the window reaches the end of the line."""
        return self.base + len(self.window) >= self.size

    def bytes(self, start: int, end: int) -> bytes:
        if not (self.base <= start and end <= self.base + len(self.window)):
            self._load(start, end - start)
        return self.window[start - self.base : end - self.base]

    def parse(self, start: int, end: int) -> Any:
        return jsstr.parse_bytes(self.bytes(start, end))  # ValueError unless JSON

    def skip(self, pos: int) -> int:
        while pos < self.size:
            i = self._local(pos)  # may move the window
            match = _WS.match(self.window, i)
            assert match is not None  # the pattern matches the empty string
            pos = self.base + match.end()
            if match.end() < len(self.window):
                break
        return pos

    def at(self, pos: int) -> int:
        if pos >= self.size:
            raise NotServed
        i = self._local(pos)  # may move the window
        return self.window[i]

    def value_end(self, pos: int) -> int:
        """Where the value at *pos* ends (for valid JSON; the parser judges the span)."""
        if self.at(pos) in _OPEN:
            return self._container_end(pos)
        while True:
            i = self._local(pos)
            scalar = _SCALAR.match(self.window, i)
            if scalar is not None and (scalar.end() < len(self.window) or self._ends()):
                return self.base + scalar.end()
            if self._ends() or (scalar is None and self.window[i] != _QUOTE):
                raise NotServed
            self._load(pos, 2 * (len(self.window) - i))  # cut by the window: widen it

    def _container_end(self, pos: int) -> int:
        depth = 0
        i = self._local(pos)
        while True:
            window = self.window
            for match in _TOKEN.finditer(window, i):
                token = window[match.start()]
                if token == _QUOTE:
                    if match.end() - match.start() > 1:
                        continue  # a string, skipped whole
                    if self._ends():
                        raise NotServed  # a string that never ends
                    # a string the window cuts: the window again from its quote, wider
                    cut = match.start()
                    self._load(self.base + cut, 2 * (len(window) - cut))
                    break
                depth += 1 if token in _OPEN else -1
                if depth == 0:
                    return self.base + match.end()
            else:
                if self._ends():
                    raise NotServed
                self._load(self.base + len(window))
            i = 0

    def members(
        self, pos: int, walk: Callable[[str, int], tuple[Any, int] | None]
    ) -> tuple[dict[str, Any], int]:
        """The object at *pos*: each member's ``walk(key, start)`` (what it gave and where
        the value ends) or, where that is None, its span ``(start, end)``; and its end."""
        if self.at(pos) != 0x7B:
            raise NotServed
        out: dict[str, Any] = {}
        pos = self.skip(pos + 1)
        if self.at(pos) == 0x7D:
            return out, pos + 1
        while True:
            if self.at(pos) != _QUOTE:
                raise NotServed
            end = self.value_end(pos)
            key = self.parse(pos, end)
            if key in out:
                raise NotServed  # a duplicate key: the data path keeps the last
            pos = self.skip(end)
            if self.at(pos) != 0x3A:
                raise NotServed
            start = self.skip(pos + 1)
            walked = walk(key, start)
            if walked is None:
                end = self.value_end(start)
                out[key] = (start, end)
            else:
                out[key], end = walked
            pos = self.skip(end)
            if self.at(pos) == 0x7D:
                return out, pos + 1
            if self.at(pos) != 0x2C:
                raise NotServed
            pos = self.skip(pos + 1)

    def elements(self, pos: int) -> tuple[array[int], int]:
        """The spans of the array at *pos* (start, end, start, end, …) and its end."""
        if self.at(pos) != 0x5B:
            raise NotServed
        spans = array("q")
        pos = self.skip(pos + 1)
        if self.at(pos) == 0x5D:
            return spans, pos + 1
        while True:
            end = self.value_end(pos)
            spans.append(pos)
            spans.append(end)
            pos = self.skip(end)
            if self.at(pos) == 0x5D:
                return spans, pos + 1
            if self.at(pos) != 0x2C:
                raise NotServed
            pos = self.skip(pos + 1)
