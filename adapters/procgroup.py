"""Process groups: end an implementation and everything it started, whatever happens.

An adapter often runs behind a wrapper (``npm run``, ``sh -c``, a script) and may start
workers of its own; killing only the direct child leaves the real implementation running
and holding the pipes.  So every implementation process starts a session of its own (its
own process group), and ending it means the whole group: ``SIGTERM``, a grace period,
then ``SIGKILL`` (decision D-135).

A harness killed with ``SIGKILL`` cannot clean up after itself.  For that case each
harness process has one *watchdog*: a tiny helper in its own session that holds the
read end of a pipe and the list of live groups; when the harness dies the pipe closes
and the watchdog ends every group still listed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Final

#: Seconds between SIGTERM and SIGKILL when a group is ended.
TERM_GRACE: Final = 1.0
_POLL: Final = 0.02


def _members(pgid: int) -> list[int] | None:
    """Live (non-zombie) pids of group *pgid* from /proc, or None without /proc."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    found: list[int] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(pgid):
            found.append(int(entry.name))
    return found


def group_alive(pgid: int) -> bool:
    """Whether any process of group *pgid* is still running (zombies do not count)."""
    members = _members(pgid)
    if members is not None:
        return bool(members)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def end_group(
    pgid: int, leader: subprocess.Popen[bytes] | None = None, grace: float = TERM_GRACE
) -> None:
    """SIGTERM the whole group, wait up to *grace* seconds, then SIGKILL what is left."""
    _signal(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while True:
        if leader is not None:
            leader.poll()  # reap the leader, or it lingers as a zombie member
        if not group_alive(pgid):
            return
        if time.monotonic() >= deadline:
            break
        time.sleep(_POLL)
    _signal(pgid, signal.SIGKILL)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if leader is not None:
            leader.poll()
        if not group_alive(pgid):
            return
        time.sleep(_POLL)


class Watchdog:
    """The helper that ends this process's groups if this process dies first."""

    _instance: Watchdog | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._send_lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.pipe: IO[bytes] | None = None
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "dsh_conformance.adapters.procgroup"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
            self.pipe = self.process.stdin
        except OSError:
            self.process = None  # best effort: the harness still ends groups itself

    @classmethod
    def get(cls) -> Watchdog:
        with cls._lock:
            # A forked child (xdist, multiprocessing) needs a watchdog of its own.
            if cls._instance is None or cls._instance.pid != os.getpid():
                cls._instance = cls()
            return cls._instance

    def _send(self, line: str) -> None:
        if self.pipe is None:
            return
        # Bounded: a signal landing between acquire and release must not hang a later call.
        if not self._send_lock.acquire(timeout=1.0):
            return
        try:
            with contextlib.suppress(OSError, ValueError):
                self.pipe.write(line.encode() + b"\n")
                self.pipe.flush()
        finally:
            self._send_lock.release()

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}")


def _watch(lines: Iterable[bytes]) -> None:
    groups: set[int] = set()
    for raw in lines:
        text = raw.strip().decode("ascii", "replace")
        if text[:1] in "+-" and text[1:].isdigit():
            (groups.add if text[0] == "+" else groups.discard)(int(text[1:]))
    for pgid in sorted(groups):  # the harness is gone: nothing else will end these
        end_group(pgid)


def main() -> int:
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)
    _watch(sys.stdin.buffer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
