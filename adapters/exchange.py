"""Requests out, replies in: the subprocess transport's calls (docs/protocol.md).

``call_many`` pipelines a batch: its requests are sent as they are encoded, so the
implementation starts on the first while the rest are written, and its replies are read
in request order, each run that has arrived in one pass (adapters/batch.py, D-484) when
every one is its request's result and line by line otherwise.  Each call waits for its
reply at most the per-call timeout.  ``send_many`` is the same batch read later
(adapters/pending.py, D-507): sent at once, its replies read on ``results()``, or before
any other exchange needs the pipe.

The mixin of ``SubprocessAdapter`` (adapters/subprocess.py), which starts the process it
talks to; what a line that is not the awaited answer means is adapters/reply_faults.py's.
"""

from __future__ import annotations

import queue
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.batch import results as batch_results
from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
from dsh_conformance.adapters.pending import Deferred
from dsh_conformance.adapters.process import Process
from dsh_conformance.adapters.reply_faults import ReplyFaults

#: Requests of a pipelined batch encoded before the first of them are sent.
_SEND_EVERY: Final = 128


class Exchange(ReplyFaults):
    """The calls of ``SubprocessAdapter``: one request, or a pipelined batch."""

    #: Seconds to wait for each reply (the per-call timeout).
    timeout: float
    calls: int
    closed: bool
    _process: Process | None
    _next_id: int
    #: The batch ``send_many`` sent whose replies are not read yet.
    _pending: Deferred | None

    def _start(self) -> None:
        """Start the process and handshake (``SubprocessAdapter``'s)."""
        raise NotImplementedError

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        """Run one operation; raise ImplementationError (typed) or AdapterFault."""
        reply = self.call_many([(op, args)])[0]
        if isinstance(reply, ImplementationError):
            raise reply
        return reply

    def call_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> list[Any]:
        """Pipeline *calls*: send them all, then read the replies in order.

        Each item of the result is the operation's JSON result, or the
        ``ImplementationError`` it answered with (returned, not raised).  A fault raises
        ``AdapterFault`` for the whole batch.
        """
        return self.send_many(calls).results()

    def send_many(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> Deferred:
        """Send *calls* now; their replies are read by ``results()`` (what ``call_many``
        returns or raises), or by the next exchange, which reads them first.  A fault
        while sending raises at once."""
        self.settle()
        if self.closed:
            # Late calls (a test's cleanup run by the garbage collector at exit) must not
            # start a new process after the run has ended the last one.
            raise AdapterFault("crash", f"{self.name}: the adapter is closed")
        if self._process is None:
            self._start()
        first = self._next_id  # the batch's ids, taken in one go
        self._next_id += len(calls)
        # wire.request, inlined: a copy only when args is not a dict already.
        batch = [
            (op, {"id": id_, "op": op, "args": args if type(args) is dict else dict(args)})
            for id_, (op, args) in enumerate(calls, first)
        ]
        if self.validate:
            for _, message in batch:
                wire.check("request", message)
        timeout = self.timeout
        process, stderr_before = self._send(batch)

        def collect() -> list[Any]:
            out = self._read(process, batch, timeout, stderr_before, True)
            self.calls += len(batch)
            return out

        self._pending = Deferred(collect)
        return self._pending

    def settle(self) -> None:
        """Read the replies of the batch ``send_many`` left pending, if any (kept for its
        own ``results()``): requests and replies are never interleaved."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.wait()

    def _exchange(
        self, batch: Sequence[tuple[str, dict[str, Any]]], timeout: float, results: bool = False
    ) -> list[Any]:
        """Send *batch* and read one reply per request, in order: the replies themselves,
        or with *results* what ``call_many`` returns for each (the operation's result, or
        the ``ImplementationError`` it answered with)."""
        process, stderr_before = self._send(batch)
        return self._read(process, batch, timeout, stderr_before, results)

    def _send(self, batch: Sequence[tuple[str, dict[str, Any]]]) -> tuple[Process, int]:
        """Send *batch*: the process it went to, and the stderr chunks it had before."""
        process = self._process
        assert process is not None
        self._check_no_stray_reply(process, batch[0][0])
        # What stderr held before the batch was sent belongs to earlier exchanges: taken
        # now, so that "wrote to stderr, then went silent" means during this batch.
        process.drain_stderr()
        stderr_before = process.stderr_chunks
        try:
            # Sent as it is encoded: the implementation starts on the first requests
            # while the rest are still being written.
            for start in range(0, len(batch), _SEND_EVERY):
                chunk = batch[start : start + _SEND_EVERY]
                process.send(b"".join(wire.encode_all([message for _, message in chunk])))
        except (OSError, ValueError):
            raise self._crashed(process, batch[0][0]) from None
        return process, stderr_before

    def _read(
        self,
        process: Process,
        batch: Sequence[tuple[str, dict[str, Any]]],
        timeout: float,
        stderr_before: int,
        results: bool,
    ) -> list[Any]:
        """The replies to *batch*, sent to *process*, read in order (``_exchange``)."""
        if results and not self.validate:
            return self._results(process, batch, timeout, stderr_before)
        return [
            self._reply(process, batch, index, timeout, stderr_before, results)
            for index in range(len(batch))
        ]

    def _results(
        self,
        process: Process,
        batch: Sequence[tuple[str, dict[str, Any]]],
        timeout: float,
        stderr_before: int,
    ) -> list[Any]:
        """``call_many``'s answers to *batch*: each run of replies that has arrived is
        read in one pass (adapters/batch.py) when every one is its request's result, and
        line by line by ``_reply`` otherwise (which finds and words the fault)."""
        arrived = process.lines
        ids = [message["id"] for _, message in batch]
        out: list[Any] = []
        index, size = 0, len(batch)
        while index < size:
            if not arrived:
                op, message = batch[index]
                try:
                    arrived.appendleft(process.next_line(timeout))
                except queue.Empty:
                    raise self._silent(process, op, message["id"], timeout, stderr_before) from None
            take = min(len(arrived), size - index)
            if take == len(arrived):
                lines: list[bytes | tuple[str, bytes]] = list(arrived)
                arrived.clear()
            else:  # more lines than replies awaited: the extra ones stay for the check
                lines = [arrived.popleft() for _ in range(take)]
            got = batch_results(lines, ids[index : index + take])
            if got is not None:
                out += got
                index += take
                continue
            arrived.extendleft(reversed(lines))
            for _ in range(take):
                out.append(self._reply(process, batch, index, timeout, stderr_before, True))
                index += 1
        return out

    def _reply(
        self,
        process: Process,
        batch: Sequence[tuple[str, dict[str, Any]]],
        index: int,
        timeout: float,
        stderr_before: int,
        results: bool,
    ) -> Any:
        """Read the reply to ``batch[index]`` the general way: the reply itself, or with
        *results* the operation's result or the ``ImplementationError`` it answered."""
        op, message = batch[index]
        id_ = message["id"]
        arrived = process.lines
        if arrived:
            line = arrived.popleft()
        else:
            try:
                line = process.next_line(timeout)
            except queue.Empty:
                raise self._silent(process, op, id_, timeout, stderr_before) from None
        if isinstance(line, tuple):  # not a reply line: EOF or an over-long line
            raise self._not_a_reply(process, line, op)
        try:
            reply = wire.decode(line)
            self._check_reply(reply, id_, op, batch, index)
        except AdapterFault:
            self._drop()
            raise
        if not results:
            return reply
        if "error" in reply:
            error = reply["error"]
            # Messages are for people: spelled out so they cannot drive a terminal.
            return ImplementationError(error["code"], wire.printable(error["message"]))
        return reply["result"]
