"""The signals that end a run early, remembered so the record can say which.

Ctrl-C (SIGINT), SIGTERM (a CI runner cancelling a job) and SIGHUP (a closed terminal)
all become ``KeyboardInterrupt`` inside a run, so pytest unwinds the same way for each:
the current test is abandoned, the footer says ``interrupted`` with the signal's name,
the adapter's process group is ended, and the CLI still writes its reports and exits
``EX_INTERRUPTED`` (decision D-136).  SIGKILL cannot be caught: its record has no
footer, which is how a truncated run reads.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any, Final

#: Signals turned into ``KeyboardInterrupt`` during a run.
HANDLED: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_received: list[str] = []


def received() -> str | None:
    """The name of the first signal that interrupted the current run (``SIGINT``…)."""
    return _received[0] if _received else None


def reset() -> None:
    _received.clear()


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signal.Signals(signum).name)
    raise KeyboardInterrupt


def _ours(signum: int, current: Any) -> bool:
    """Only take over a signal nobody else handles (Python's defaults)."""
    if signum == signal.SIGINT:
        return current is signal.default_int_handler
    return bool(current == signal.SIG_DFL)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, the HANDLED signals raise ``KeyboardInterrupt`` (main thread)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Any] = {}
    for signum in HANDLED:
        current = signal.getsignal(signum)
        if _ours(signum, current):
            previous[signum] = current
            signal.signal(signum, _interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
