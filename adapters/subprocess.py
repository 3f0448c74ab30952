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
import selectors
import shlex
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, Final

from dsh_conformance import signals
from dsh_conformance.adapters import procgroup, wire
from dsh_conformance.adapters.contract import (
    PROTOCOL_VERSION,
    AdapterFault,
    Handshake,
    ImplementationError,
)

#: How much of stderr is kept for fault messages.
STDERR_TAIL_BYTES: Final = 4096
#: How long ``close`` waits for a clean exit after ``shutdown`` before killing.
SHUTDOWN_GRACE: Final = 2.0

#: How often pipe readers look up from an idle pipe to see whether to stop.
READ_POLL: Final = 0.1

_EOF: Final = ("eof", b"")
HANDLED_SIGNALS: Final = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


class _Process:
    """One running implementation process group with drained stdout and stderr.

    The process leads a session of its own, so ending it ends everything it started
    (procgroup.py).  Readers poll the pipes with a short select timeout and stop when
    asked, so no thread is ever stuck on a pipe some escaped grandchild keeps open.
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
        self.stdin: IO[bytes] = self.popen.stdin
        self.lines: queue.SimpleQueue[tuple[str, bytes]] = queue.SimpleQueue()
        self.max_reply_bytes = max_reply_bytes
        self.stderr_tail: deque[bytes] = deque()
        self.stderr_size = 0
        self.stderr_chunks = 0
        self._stop = threading.Event()
        self._ended = False
        self._stdout_thread = threading.Thread(
            target=self._read_stdout, args=(self.popen.stdout.fileno(),), daemon=True
        )
        self._stderr_thread = threading.Thread(
            target=self._read_stderr, args=(self.popen.stderr.fileno(),), daemon=True
        )
        self._stdout_thread.start()
        self._stderr_thread.start()

    def _chunks(self, fd: int) -> Iterator[bytes]:
        """What arrives on *fd* until EOF, or until the process is ended."""
        # Ctrl-C and SIGTERM belong to the main thread, which turns them into
        # KeyboardInterrupt; delivered here they would wait for the main thread's timeout.
        signal.pthread_sigmask(signal.SIG_BLOCK, HANDLED_SIGNALS)
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not selector.select(READ_POLL):
                    continue
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    return
                if not chunk:
                    return
                yield chunk

    def next_line(self, timeout: float) -> tuple[str, bytes]:
        """The next stdout event, waiting in short slices: a signal that the kernel hands
        to another thread still interrupts the main thread within one slice."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            try:
                return self.lines.get(timeout=min(remaining, READ_POLL * 5))
            except queue.Empty:
                if signals.received() is not None:
                    # The handler's KeyboardInterrupt can be lost (raised inside a
                    # finalizer the garbage collector ran); the signal is not.
                    raise KeyboardInterrupt from None

    def _read_stdout(self, fd: int) -> None:
        partial = b""
        discarding = False  # inside a line already reported as too long
        cap = self.max_reply_bytes
        with contextlib.suppress(OSError, ValueError):
            for chunk in self._chunks(fd):
                if discarding:
                    cut = chunk.find(b"\n")
                    if cut < 0:
                        continue
                    discarding = False
                    chunk = chunk[cut + 1 :]
                data = partial + chunk
                *complete, partial = data.split(b"\n")
                for line in complete:
                    if len(line) > cap:
                        self.lines.put(("oversized", str(len(line)).encode()))
                    else:
                        self.lines.put(("line", line))
                if len(partial) > cap:
                    # Reported now, not when (if ever) the newline comes: a reply that
                    # never ends is a protocol violation, not a slow answer.
                    self.lines.put(("too-long", str(len(partial)).encode()))
                    discarding, partial = True, b""
        if partial.strip():
            self.lines.put(("line", partial))
        self.lines.put(_EOF)

    def _read_stderr(self, fd: int) -> None:
        with contextlib.suppress(OSError, ValueError):
            for chunk in self._chunks(fd):
                self.stderr_chunks += 1
                self.stderr_tail.append(chunk)
                self.stderr_size += len(chunk)
                while self.stderr_size - len(self.stderr_tail[0]) >= STDERR_TAIL_BYTES:
                    self.stderr_size -= len(self.stderr_tail.popleft())

    def stderr_text(self) -> str:
        data = b"".join(self.stderr_tail)[-STDERR_TAIL_BYTES:]
        return wire.printable(data.decode("utf-8", "replace")).strip()

    def write(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

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
        self._stdout_thread.join(timeout=1)
        self._stderr_thread.join(timeout=1)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()

    def shutdown(self, request: bytes) -> None:
        """Ask politely (``shutdown``), then end the whole group after a grace period."""
        with contextlib.suppress(OSError, ValueError):
            self.write(request)
            self.stdin.close()
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
        process = _Process(self.argv, self.cwd, self.env, self.max_reply_bytes)
        self._process = process
        request = wire.handshake_request(0)
        # Starting a runtime takes longer than answering a call: never less than 30 s.
        startup = self.startup_timeout or max(self.timeout, 30.0)
        reply = self._exchange([("handshake", request)], startup)[0]
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
        if version != PROTOCOL_VERSION:
            self._drop()
            raise AdapterFault(
                "protocol",
                f"{self.name}: protocol mismatch: the implementation speaks {version!r}, "
                f"the harness speaks {PROTOCOL_VERSION}",
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
        batch: list[tuple[str, dict[str, Any]]] = []
        for op, args in calls:
            message = wire.request(self._take_id(), op, args)
            if self.validate:
                wire.check("request", message)
            batch.append((op, message))
        replies = self._exchange(batch, self.timeout)
        self.calls += len(batch)
        out: list[Any] = []
        for reply in replies:
            if "error" in reply:
                error = reply["error"]
                # Messages are for people: spelled out so they cannot drive a terminal.
                out.append(ImplementationError(error["code"], wire.printable(error["message"])))
            else:
                out.append(reply["result"])
        return out

    def _exchange(
        self, batch: Sequence[tuple[str, dict[str, Any]]], timeout: float
    ) -> list[dict[str, Any]]:
        process = self._process
        assert process is not None
        self._check_no_stray_reply(process, batch[0][0])
        try:
            process.write(b"".join(wire.encode(message) for _, message in batch))
        except (OSError, ValueError):
            raise self._crashed(process, batch[0][0]) from None
        replies: list[dict[str, Any]] = []
        for op, message in batch:
            stderr_before = process.stderr_chunks
            try:
                kind, line = process.next_line(timeout)
            except queue.Empty:
                raise self._silent(process, op, message["id"], timeout, stderr_before) from None
            if kind == "eof":
                raise self._crashed(process, op)
            if kind in ("oversized", "too-long"):
                self._drop()
                size = line.decode()
                how = f"is {size} bytes" if kind == "oversized" else f"has {size} bytes and no end"
                raise AdapterFault(
                    "protocol",
                    f"{self.name}: line too long: the reply to {op!r} {how}, "
                    f"over the {self.max_reply_bytes}-byte reply cap (one reply per line, "
                    "newline-terminated; raise the cap with DSH_ADAPTER_MAX_REPLY_BYTES)",
                )
            try:
                reply = wire.decode(line)
                self._check_reply(reply, message["id"], op)
            except AdapterFault:
                self._drop()
                raise
            replies.append(reply)
        return replies

    def _check_no_stray_reply(self, process: _Process, op: str) -> None:
        """Nothing may arrive between exchanges: a second reply to an answered request
        is a protocol violation (scored as a crash), never read as the next answer."""
        try:
            kind, line = process.lines.get_nowait()
        except queue.Empty:
            return
        if kind == "eof":
            raise self._crashed(process, op)
        self._drop()
        shown = wire.printable(line[:200].decode("utf-8", "replace"), keep_newlines=False)
        raise AdapterFault(
            "protocol",
            f"{self.name}: an unsolicited line arrived before {op!r} was sent (a duplicate "
            f"or extra reply to an earlier request; each request gets exactly one reply): "
            f"{shown}",
        )

    def _check_reply(self, reply: dict[str, Any], expected: Any, op: str) -> None:
        got = reply.get("id")
        if got != expected or isinstance(got, bool):
            raise AdapterFault(
                "protocol",
                f"{self.name}: reply id {wire.printable(repr(got))} does not match request "
                f"id {expected!r} ({op!r}); replies must come in request order",
            )
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

    def _silent(
        self, process: _Process, op: str, id_: Any, timeout: float, stderr_before: int
    ) -> AdapterFault:
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
