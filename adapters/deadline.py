"""A per-call timeout for in-process adapters (D-164).

A subprocess adapter that hangs is killed by its transport; an in-process one used to
hang the whole run.  A watchdog thread notices a call that has run longer than the
timeout and interrupts the main thread with SIGALRM; the handler raises a ``timeout``
``AdapterFault`` inside the hung call, so the test is scored ``timeout`` and the run goes
on.  Calls pay two attribute stores, not a syscall: the watchdog does the clock work.

Only the main thread of a POSIX process can be interrupted this way; elsewhere calls
run without a deadline (and say so in ``enabled``).  A hang in C code that never returns
to the interpreter cannot be interrupted.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Mapping
from types import FrameType
from typing import Any

from dsh_conformance.adapters.contract import Adapter, AdapterFault, Handshake

#: The default per-call timeout, the same as the subprocess transport's.
DEFAULT_TIMEOUT = 30.0


class InProcessDeadline:
    """Wrap an in-process adapter so that no call outlives *timeout* seconds."""

    transport = "in-process"

    def __init__(self, adapter: Adapter, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.adapter = adapter
        self.timeout = timeout
        #: (op, start) of the call in progress, or None between calls.
        self._current: tuple[str, float] | None = None
        self._expired: tuple[str, float] | None = None
        self._closed = threading.Event()
        self._previous: Any = None
        main = threading.main_thread()
        self.enabled = threading.current_thread() is main and hasattr(signal, "pthread_kill")
        if self.enabled:
            self._main_ident = main.ident
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
            self._watchdog = threading.Thread(target=self._watch, name="dsh-deadline", daemon=True)
            self._watchdog.start()

    def handshake(self) -> Handshake:
        return self.adapter.handshake()

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        self._current = (op, time.monotonic())
        try:
            return self.adapter.call(op, args)
        finally:
            self._current = None

    def close(self) -> None:
        self._closed.set()
        if self.enabled and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)
        self.adapter.close()

    def _tick(self) -> float:
        return min(0.25, max(self.timeout / 4, 0.01))

    def _watch(self) -> None:
        while not self._closed.wait(self._tick()):
            current = self._current
            if current is None or current == self._expired:
                continue
            if time.monotonic() - current[1] > self.timeout:
                self._expired = current
                signal.pthread_kill(self._main_ident, signal.SIGALRM)  # type: ignore[arg-type]

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        expired = self._expired
        if expired is not None and expired == self._current:
            raise AdapterFault(
                "timeout",
                f"in-process call {expired[0]!r} did not return within {self.timeout:g} s",
            )
        if callable(self._previous):
            self._previous(signum, frame)
