"""The running implementation behind the subprocess transport: its pipes and its end.

Requests go out through a non-blocking stdin while replies are awaited; stdout comes in
split into lines and capped (an over-long line is reported by its size, never held);
stderr keeps its last few KiB for the words of a fault; and ending the process ends its
whole process group (adapters/procgroup.py).  It reads no protocol message:
adapters/exchange.py does, and adapters/reply_faults.py words what went wrong.
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
from typing import Final

from dsh_conformance import signals
from dsh_conformance.adapters import procgroup, wire
from dsh_conformance.adapters.contract import AdapterFault

#: How much of stderr is kept for fault messages.
STDERR_TAIL_BYTES: Final = 4096
#: How long ``close`` waits for a clean exit after ``shutdown`` before killing.
SHUTDOWN_GRACE: Final = 2.0

#: How often pipe readers look up from an idle pipe to see whether to stop.
READ_POLL: Final = 0.1

#: The stdout event that ends them all: the process closed its stdout.
EOF: Final = ("eof", b"")
HANDLED_SIGNALS: Final = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
#: Reads of stderr one drain makes at most (64 KiB each).
_DRAIN_READS: Final = 4
#: Seconds a reply is polled for before the wait blocks in ``select`` (D-537).
SPIN: Final = 50e-6


class Process:
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
        #: ("oversized", size), ("too-long", size) or ``EOF``.
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
                self.lines.append(EOF)
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
        if not self._outgoing:
            # Most replies to a small request come within tens of microseconds.  A thread
            # asleep in select is woken by the host's write, and on a virtual machine whose
            # idle core halts that wake-up costs as much again as the reply; polled for a
            # moment first, the reply is read by a thread still running (D-537).
            spin_until = time.perf_counter() + SPIN
            while True:
                self._read()
                if self.lines:
                    return self.lines.popleft()
                if time.perf_counter() >= spin_until:
                    break
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
