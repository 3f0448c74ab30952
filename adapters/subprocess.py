"""Run any implementation as a long-lived process speaking the stdio protocol.

``SubprocessAdapter`` is the harness end of docs/protocol.md: it starts the process,
handshakes, sends requests (one at a time, or pipelined with ``call_many``) and reads
replies with a per-call deadline.  Whatever goes wrong on the other side — a hang, an
exit, a stray log line on stdout, a reply to the wrong request, a reply too large to hold
— surfaces as ``AdapterFault(kind, message)`` for the call at hand, never as a harness
crash.  The broken process is killed and the next call starts a fresh one (replaying the
handshake) until the restart budget runs out, so one crash costs one result, not a run.

Registered as ``subprocess:<shell-style command>``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Final

import orjson

from dsh_conformance import signals
from dsh_conformance.adapters import procgroup, wire
from dsh_conformance.adapters.batch import results as batch_results
from dsh_conformance.adapters.contract import (
    SUPPORTED_PROTOCOLS,
    AdapterFault,
    Handshake,
    ImplementationError,
)
from dsh_conformance.adapters.heap import keep_heap

#: How much of stderr is kept for fault messages.
STDERR_TAIL_BYTES: Final = 4096
#: How long ``close`` waits for a clean exit after ``shutdown`` before killing.
SHUTDOWN_GRACE: Final = 2.0

#: How often pipe readers look up from an idle pipe to see whether to stop.
READ_POLL: Final = 0.1

_EOF: Final = ("eof", b"")
HANDLED_SIGNALS: Final = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: Reads of stderr one drain makes at most (64 KiB each).
_DRAIN_READS: Final = 4
#: Requests of a pipelined batch encoded before the first of them are sent.
_SEND_EVERY: Final = 128


class _Process:
    """One running implementation process group: requests out, reply lines in, stderr kept.

    The process leads a session of its own, so ending it ends everything it started
    (procgroup.py).  The calling thread does the protocol I/O itself with ``select``:
    while it waits for a reply it also writes whatever of the requests the pipe takes,
    so a pipelined batch is answered while it is still being sent (neither side can
    block the other on a full pipe), and Ctrl-C interrupts the wait at once.  A thread
    drains stderr, polling with a short timeout so it never sticks on a pipe some
    escaped grandchild keeps open; the calling thread drains it too where a fault's
    classification depends on what stderr held by then (``drain_stderr``, D-205).
    """

    def __init__(
        self,
        argv: Sequence[str],
        cwd: str | None,
        env: Mapping[str, str] | None,
        max_reply_bytes: int,
    ) -> None:
        try:
            self.popen = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=None if env is None else dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise AdapterFault(
                "crash", f"cannot start {shlex.join(argv)!r}: {exc.strerror or exc}"
            ) from exc
        assert self.popen.stdin
        assert self.popen.stdout
        assert self.popen.stderr
        self.pgid = self.popen.pid
        procgroup.Watchdog.get().watch(self.pgid)
        self.stdin_fd = self.popen.stdin.fileno()
        self.stdout_fd = self.popen.stdout.fileno()
        os.set_blocking(self.stdin_fd, False)
        os.set_blocking(self.stdout_fd, False)
        #: Complete stdout events in arrival order: a reply line (bytes), or
        #: ("oversized", size), ("too-long", size) or ``_EOF``.
        self.lines: deque[bytes | tuple[str, bytes]] = deque()
        self.max_reply_bytes = max_reply_bytes
        self._partial = b""
        self._discarding = False  # inside a line already reported as too long
        self._eof = False
        self._outgoing: deque[memoryview] = deque()  # requests the pipe has not taken yet
        self._write_error: OSError | None = None
        self.stderr_tail: deque[bytes] = deque()
        self.stderr_size = 0
        self.stderr_chunks = 0
        self._stderr_fd = self.popen.stderr.fileno()
        os.set_blocking(self._stderr_fd, False)
        #: Held while stderr is read, by the drain thread or by ``drain_stderr``.
        self._stderr_lock = threading.Lock()
        self._stderr_open = True
        self._stop = threading.Event()
        self._ended = False
        self._stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_thread.start()

    # --- stdout: reply lines ------------------------------------------------------------

    def _feed(self, chunk: bytes) -> None:
        """Split what arrived into complete lines; report over-long ones by size."""
        cap = self.max_reply_bytes
        if self._discarding:
            cut = chunk.find(b"\n")
            if cut < 0:
                return
            self._discarding = False
            chunk = chunk[cut + 1 :]
        *complete, self._partial = (self._partial + chunk).split(b"\n")
        if not complete or max(map(len, complete)) <= cap:
            self.lines.extend(complete)  # the common case: every line within the cap
        else:
            for line in complete:
                if len(line) > cap:
                    self.lines.append(("oversized", str(len(line)).encode()))
                else:
                    self.lines.append(line)
        if len(self._partial) > cap:
            # Reported now, not when (if ever) the newline comes: a reply that never ends
            # is a protocol violation, not a slow answer.
            self.lines.append(("too-long", str(len(self._partial)).encode()))
            self._discarding, self._partial = True, b""

    def _read(self) -> None:
        """Take everything stdout has now (the fd is non-blocking)."""
        while not self._eof:
            try:
                chunk = os.read(self.stdout_fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                if self._partial.strip():
                    self.lines.append(self._partial)
                self._partial = b""
                self.lines.append(_EOF)
                return
            self._feed(chunk)
            if len(chunk) < 1 << 16:
                return

    def _write(self) -> None:
        """Write as much of the outgoing requests as the pipe takes now."""
        outgoing = self._outgoing
        try:
            while outgoing:
                head = outgoing[0]
                written = os.write(self.stdin_fd, head[: 1 << 16])
                if written < len(head):
                    outgoing[0] = head[written:]
                else:
                    outgoing.popleft()
        except BlockingIOError:
            pass
        except OSError as exc:  # the process closed its stdin (it died, or will)
            self._write_error = exc
            outgoing.clear()

    def send(self, data: bytes) -> None:
        """Queue *data* for the process and write what the pipe takes now; the rest is
        written while replies are awaited.  Raise ``OSError`` when the process can no
        longer take input."""
        if self._write_error is None:
            self._outgoing.append(memoryview(data))
            self._write()
        if self._write_error is not None:
            raise self._write_error

    def poll(self) -> None:
        """Read whatever has already arrived, without waiting."""
        ready, _, _ = select.select([self.stdout_fd], [], [], 0)
        if ready:
            self._read()

    def next_line(self, timeout: float) -> bytes | tuple[str, bytes]:
        """The next stdout event, writing pending requests meanwhile; ``queue.Empty``
        after *timeout* seconds without one.  The wait goes in short slices so that a
        signal delivered to another thread still interrupts it within one slice."""
        if self.lines:
            return self.lines.popleft()
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            writing = [self.stdin_fd] if self._outgoing else []
            readable, writable, _ = select.select(
                [self.stdout_fd], writing, [], min(remaining, READ_POLL * 5)
            )
            if writable:
                self._write()
            if readable:
                self._read()
                if self.lines:
                    return self.lines.popleft()
            elif not writable and signals.received() is not None:
                # The handler's KeyboardInterrupt can be lost (raised inside a finalizer
                # the garbage collector ran); the signal is not.
                raise KeyboardInterrupt from None

    # --- stderr ---------------------------------------------------------------------------

    def _read_stderr(self) -> None:
        # Ctrl-C and SIGTERM belong to the main thread, which turns them into
        # KeyboardInterrupt; delivered here they would wait for the main thread's timeout.
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
        with contextlib.suppress(OSError, ValueError), selectors.DefaultSelector() as selector:
            selector.register(self._stderr_fd, selectors.EVENT_READ)
            while not self._stop.is_set():
                if selector.select(READ_POLL) and not self.drain_stderr():
                    return

    def drain_stderr(self) -> bool:
        """Take everything stderr holds now (the fd is non-blocking); ``False`` once it
        is closed.  The transport calls it itself where a classification depends on
        what was written by then, so the answer never waits on the drain thread's turn
        (D-205)."""
        with self._stderr_lock:
            # Bounded: a process that floods stderr faster than it is read must not hold
            # the caller here.  What the pipe held when the drain began is at most its
            # capacity (64 KiB on Linux), which the first read takes.
            for _ in range(_DRAIN_READS):
                if not self._stderr_open or self._ended:
                    return False
                try:
                    chunk = os.read(self._stderr_fd, 1 << 16)
                except BlockingIOError:
                    return True
                except OSError:
                    chunk = b""
                if not chunk:
                    self._stderr_open = False
                    return False
                self.stderr_chunks += 1
                self.stderr_tail.append(chunk)
                self.stderr_size += len(chunk)
                while self.stderr_size - len(self.stderr_tail[0]) >= STDERR_TAIL_BYTES:
                    self.stderr_size -= len(self.stderr_tail.popleft())
            return self._stderr_open

    def stderr_text(self) -> str:
        data = b"".join(self.stderr_tail)[-STDERR_TAIL_BYTES:]
        return wire.printable(data.decode("utf-8", "replace")).strip()

    # --- lifecycle ------------------------------------------------------------------------

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill(self) -> None:
        """End the whole group (SIGTERM, grace, SIGKILL) and release the pipes."""
        self._end()

    def _end(self) -> None:
        if self._ended:
            return
        self._ended = True
        procgroup.end_group(self.pgid, self.popen)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=procgroup.TERM_GRACE)
        procgroup.Watchdog.get().forget(self.pgid)
        self._close_pipes()

    def _close_pipes(self) -> None:
        self._stop.set()
        self._stderr_thread.join(timeout=1)
        with self._stderr_lock:  # no drain reads the fd once it is closed
            self._stderr_open = False
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    def shutdown(self, request: bytes) -> None:
        """Ask politely (``shutdown``), then end the whole group after a grace period."""
        with contextlib.suppress(OSError, ValueError):
            self.send(request)
            deadline = time.monotonic() + SHUTDOWN_GRACE
            while self._outgoing and time.monotonic() < deadline:
                select.select([], [self.stdin_fd], [], READ_POLL)
                self._write()
            assert self.popen.stdin is not None
            self.popen.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=SHUTDOWN_GRACE)
        self._end()  # whatever the leader left behind goes with it


class SubprocessAdapter:
    """An implementation in another process, behind the stdio protocol (docs/protocol.md)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        name: str = "",
        max_reply_bytes: int = wire.DEFAULT_MAX_REPLY_BYTES,
        restart_budget: int = 10,
        validate: bool = False,
        startup_timeout: float | None = None,
    ) -> None:
        if not argv:
            raise ValueError("SubprocessAdapter needs a command to run")
        self.argv = [str(a) for a in argv]
        self.cwd = None if cwd is None else os.fspath(cwd)
        self.env = env
        #: Seconds to wait for each reply (the per-call timeout).
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.name = name or shlex.join(self.argv)
        self.max_reply_bytes = max_reply_bytes
        self.restart_budget = restart_budget
        #: Check every message against spec/schemas/protocol.json.
        self.validate = validate
        self.restarts = 0
        self.calls = 0
        self.closed = False
        self._process: _Process | None = None
        self._handshake: Handshake | None = None
        self._next_id = 1

    # --- lifecycle ------------------------------------------------------------------------

    def handshake(self) -> Handshake:
        if self._handshake is None or self._process is None:
            self._start()
        assert self._handshake is not None
        return self._handshake

    def _start(self) -> None:
        if self._handshake is not None:
            if self.restarts >= self.restart_budget:
                raise AdapterFault(
                    "crash",
                    f"{self.name}: restart budget exhausted ({self.restart_budget} restarts); "
                    "the implementation keeps failing, so the remaining calls are not sent",
                )
            self.restarts += 1
        # The harness end allocates and frees a buffer per line too (orjson's output):
        # with glibc's default trim threshold that is a page fault per request, which
        # made this end the pipeline's slower half (adapters/heap.py).
        keep_heap()
        process = _Process(self.argv, self.cwd, self.env, self.max_reply_bytes)
        self._process = process
        request = wire.handshake_request(0)
        # Built directly, starting a runtime gets at least 30 s; the CLI and the pytest
        # plugin always set startup_timeout from --timeout / --handshake-timeout (D-311).
        startup = self.startup_timeout or max(self.timeout, 30.0)
        before = "stdout before the handshake: the first line on stdout must be the handshake "
        before += "reply (write logs to stderr); got: "
        process.poll()
        if process.lines and process.lines[0] != _EOF:  # a log line, most often
            event = process.lines.popleft()
            line = event if isinstance(event, bytes) else event[1]
            self._drop()
            shown = wire.printable(line[:200].decode("utf-8", "replace"), keep_newlines=False)
            raise AdapterFault("protocol", f"{self.name}: {before}{shown}")
        try:
            reply = self._exchange([("handshake", request)], startup)[0]
            # Negotiation (D-291): an adapter that refuses the newest version is offered
            # each older one the harness still runs, on the same process.
            for older in SUPPORTED_PROTOCOLS[1:]:
                if "error" not in reply:
                    break
                request = wire.handshake_request(self._take_id(), older)
                reply = self._exchange([("handshake", request)], startup)[0]
        except AdapterFault as exc:
            if exc.kind not in ("garbage", "protocol"):
                raise
            detail = exc.message.removeprefix(self.name + ": ")
            raise AdapterFault("protocol", f"{self.name}: {before}{detail}") from None
        if "error" in reply:
            self._drop()
            error = reply["error"]
            raise AdapterFault(
                "protocol",
                f"{self.name}: handshake refused: [{error.get('code')}] {error.get('message')}",
            )
        self._check_handshake(reply)
        handshake = Handshake.from_json(reply["result"])
        if self._handshake is not None and handshake != self._handshake:
            self._drop()
            raise AdapterFault(
                "protocol", f"{self.name}: the restarted process answered a different handshake"
            )
        self._handshake = handshake

    def _check_handshake(self, reply: Mapping[str, Any]) -> None:
        result = reply.get("result")
        version = result.get("protocol") if isinstance(result, dict) else None
        if version not in SUPPORTED_PROTOCOLS or type(version) is not int:
            self._drop()
            speaks = ", ".join(map(str, SUPPORTED_PROTOCOLS))
            raise AdapterFault(
                "protocol",
                f"{self.name}: protocol mismatch: the implementation "
                + (
                    f"speaks {wire.printable(orjson.dumps(version).decode())}"
                    if version is not None
                    else "names no protocol version"
                )
                + f", the harness speaks {speaks} (docs/protocol-changelog.md)",
            )
        found = wire.problems("handshake-response", reply)
        if found:
            self._drop()
            raise AdapterFault(
                "protocol", f"{self.name}: invalid handshake reply: " + "; ".join(found[:3])
            )

    def close(self) -> None:
        self.closed = True
        process, self._process = self._process, None
        if process is not None:
            process.shutdown(wire.encode(wire.request(self._take_id(), "shutdown", {})))

    def _drop(self) -> None:
        """Kill the current process; the next call starts a fresh one."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.popen.pid

    # --- calls ----------------------------------------------------------------------------

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
        out = self._exchange(batch, self.timeout, results=True)
        self.calls += len(batch)
        return out

    def _exchange(
        self, batch: Sequence[tuple[str, dict[str, Any]]], timeout: float, results: bool = False
    ) -> list[Any]:
        """Send *batch* and read one reply per request, in order: the replies themselves,
        or with *results* what ``call_many`` returns for each (the operation's result, or
        the ``ImplementationError`` it answered with)."""
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
        if results and not self.validate:
            return self._results(process, batch, timeout, stderr_before)
        return [
            self._reply(process, batch, index, timeout, stderr_before, results)
            for index in range(len(batch))
        ]

    def _results(
        self,
        process: _Process,
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
        process: _Process,
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

    def _not_a_reply(self, process: _Process, event: tuple[str, bytes], op: str) -> AdapterFault:
        """The fault for a stdout event that is not a reply line: EOF or an over-long line."""
        kind, line = event
        if kind == "eof":
            return self._crashed(process, op)
        self._drop()
        size = line.decode()
        how = f"is {size} bytes" if kind == "oversized" else f"has {size} bytes and no end"
        return AdapterFault(
            "protocol",
            f"{self.name}: line too long: the reply to {op!r} {how}, "
            f"over the {self.max_reply_bytes}-byte reply cap (one reply per line, "
            "newline-terminated; raise the cap with DSH_ADAPTER_MAX_REPLY_BYTES)",
        )

    def _check_no_stray_reply(self, process: _Process, op: str) -> None:
        """Nothing may arrive between exchanges: a second reply to an answered request
        is a protocol violation (scored as a crash), never read as the next answer."""
        process.poll()
        if not process.lines:
            return
        event = process.lines.popleft()
        if event == _EOF:
            raise self._crashed(process, op)
        line = event if isinstance(event, bytes) else event[1]
        self._drop()
        shown = wire.printable(line[:200].decode("utf-8", "replace"), keep_newlines=False)
        raise AdapterFault(
            "protocol",
            f"{self.name}: an unsolicited line arrived before {op!r} was sent (a duplicate "
            f"or extra reply to an earlier request; each request gets exactly one reply): "
            f"{shown}",
        )

    def _check_reply(
        self,
        reply: dict[str, Any],
        expected: Any,
        op: str,
        batch: Sequence[tuple[str, dict[str, Any]]] = (),
        index: int = 0,
    ) -> None:
        got = reply.get("id")
        if got != expected or type(got) is bool:
            raise self._wrong_id(got, expected, op, batch, index)
        if self.validate:
            wire.check("reply", reply)
        has_result, has_error = "result" in reply, "error" in reply
        if has_result == has_error:
            raise AdapterFault(
                "protocol", f"{self.name}: the reply to {op!r} needs exactly one of result, error"
            )
        if has_error:
            error = reply["error"]
            if not (
                isinstance(error, dict)
                and isinstance(error.get("code"), str)
                and isinstance(error.get("message"), str)
            ):
                raise AdapterFault(
                    "protocol",
                    f"{self.name}: the error reply to {op!r} is not {{code, message}} strings",
                )

    def _wrong_id(
        self,
        got: Any,
        expected: Any,
        op: str,
        batch: Sequence[tuple[str, dict[str, Any]]],
        index: int,
    ) -> AdapterFault:
        """The fault for a reply to another request than the one awaited: out of order
        when it answers a later request of the batch in flight (pipelined), else a reply
        to no request in flight (D-206)."""
        shown = wire.printable(orjson.dumps(got).decode() if _is_id(got) else repr(got))
        for later_op, message in batch[index + 1 :]:
            later = message["id"]
            if got == later and type(got) is not bool:
                return AdapterFault(
                    "protocol",
                    f"{self.name}: [{wire.REPLY_OUT_OF_ORDER}] out-of-order reply: the reply "
                    f"to request {shown} ({later_op!r}) arrived before the reply to request "
                    f"{expected!r} ({op!r}), sent first; replies must come in request order",
                    wire.REPLY_OUT_OF_ORDER,
                )
        return AdapterFault(
            "protocol",
            f"{self.name}: [{wire.REPLY_WRONG_ID}] reply id {shown} does not match request "
            f"id {expected!r} ({op!r}) nor any request in flight; replies must echo the "
            "request's id, in request order",
            wire.REPLY_WRONG_ID,
        )

    def _silent(
        self, process: _Process, op: str, id_: Any, timeout: float, stderr_before: int
    ) -> AdapterFault:
        process.drain_stderr()  # what was written by the deadline, not what was read by then
        spoke = process.stderr_chunks > stderr_before
        tail = process.stderr_text()
        self._drop()
        if spoke:
            return AdapterFault(
                "crash",
                f"{self.name}: wrote to stderr and then went silent on {op!r} "
                f"(request {id_!r}, no reply within {timeout:g}s); stderr ends with:\n{tail}",
            )
        return AdapterFault(
            "timeout",
            f"{self.name}: no reply to {op!r} (request {id_!r}) within the {timeout:g}s "
            "per-call timeout (raise it with --timeout)",
        )

    def _crashed(self, process: _Process, op: str) -> AdapterFault:
        try:
            status: int | None = process.popen.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        time.sleep(0.01)  # let the stderr reader catch the last words
        tail = process.stderr_text()
        self._drop()
        how = "closed its stdout" if status is None else f"exited with status {status}"
        message = f"{self.name}: the implementation {how} while answering {op!r}"
        return AdapterFault("crash", message + (f"; stderr ends with:\n{tail}" if tail else ""))


def _is_id(value: Any) -> bool:
    """Whether *value* is a JSON string or number (what a reply id can be)."""
    return type(value) in (str, int, float)


def _from_name(rest: str) -> SubprocessAdapter:
    from dsh_conformance.model.errors import DshError, ErrorCode

    argv = shlex.split(rest)
    if not argv:
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            "subprocess adapter without a command",
            hint="write subprocess:'node adapter.mjs' (a shell-style command line)",
        )
    env = os.environ
    return SubprocessAdapter(
        argv,
        timeout=float(env.get("DSH_ADAPTER_TIMEOUT", "30")),
        validate=env.get("DSH_ADAPTER_VALIDATE", "") not in {"", "0", "false"},
        max_reply_bytes=int(env.get("DSH_ADAPTER_MAX_REPLY_BYTES", wire.DEFAULT_MAX_REPLY_BYTES)),
        restart_budget=int(env.get("DSH_ADAPTER_RESTART_BUDGET", "10")),
    )


def _register() -> None:
    from dsh_conformance.adapters.registry import register

    register(
        "subprocess",
        _from_name,
        "subprocess:CMD — any implementation speaking the stdio protocol (docs/protocol.md)",
    )


_register()
