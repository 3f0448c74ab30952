"""Run any implementation as a long-lived process speaking the stdio protocol.

``SubprocessAdapter`` is the harness end of docs/protocol.md: it starts the process,
handshakes, sends requests (one at a time, or pipelined with ``call_many``) and reads
replies with a per-call deadline.  Whatever goes wrong on the other side — a hang, an
exit, a stray log line on stdout, a reply to the wrong request, a reply too large to hold
— surfaces as ``AdapterFault(kind, message)`` for the call at hand, never as a harness
crash.  The broken process is killed and the next call starts a fresh one (replaying the
handshake) until the restart budget runs out, so one crash costs one result, not a run.

The transport is in rooms of one concept each: this module the adapter's lifecycle
(start, handshake and its negotiation, restarts, close); adapters/exchange.py its calls;
adapters/reply_faults.py the fault each way of not answering is; adapters/process.py the
process and its pipes.

Registered as ``subprocess:<shell-style command>``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import (
    SUPPORTED_PROTOCOLS,
    AdapterFault,
    Handshake,
)
from dsh_conformance.adapters.exchange import Exchange
from dsh_conformance.adapters.heap import keep_heap
from dsh_conformance.adapters.process import (
    EOF,
    HANDLED_SIGNALS,
    READ_POLL,
    SHUTDOWN_GRACE,
    STDERR_TAIL_BYTES,
    Process,
)

__all__ = [
    "HANDLED_SIGNALS",
    "READ_POLL",
    "SHUTDOWN_GRACE",
    "STDERR_TAIL_BYTES",
    "SubprocessAdapter",
]

#: What a line on stdout before the handshake reply is told (the reply must come first).
_BEFORE = (
    "stdout before the handshake: the first line on stdout must be the handshake "
    "reply (write logs to stderr); got: "
)

#: The names this module had before the transport was split (tests read them here).
_Process = Process
_EOF = EOF


class SubprocessAdapter(Exchange):
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
        self._process: Process | None = None
        self._handshake: Handshake | None = None
        self._next_id = 1
        self._pending = None
        #: The handshake request ``launch`` sent and the stderr chunks before it.
        self._launched: tuple[dict[str, Any], int] | None = None

    # --- lifecycle ------------------------------------------------------------------------

    def handshake(self) -> Handshake:
        if self._handshake is None or self._process is None:
            self._start()
        assert self._handshake is not None
        return self._handshake

    def launch(self) -> None:
        """Start the process and send its handshake now, and read the reply later (D-537):
        the implementation starts up while the harness is still importing and collecting,
        and the first ``handshake()`` or call reads the reply with every usual check.  A
        no-op once started; a process that cannot start raises ``AdapterFault`` here."""
        if self._process is None and self._handshake is None and not self.closed:
            self._spawn()

    def _spawn(self) -> None:
        """Start the process and send the first handshake request (read by ``_start``)."""
        # The harness end allocates and frees a buffer per line too (orjson's output):
        # with glibc's default trim threshold that is a page fault per request, which
        # made this end the pipeline's slower half (adapters/heap.py).
        keep_heap()
        process = Process(self.argv, self.cwd, self.env, self.max_reply_bytes)
        self._process = process
        process.poll()
        if process.lines and process.lines[0] != EOF:  # a log line, most often
            event = process.lines.popleft()
            line = event if isinstance(event, bytes) else event[1]
            self._drop()
            shown = wire.printable(line[:200].decode("utf-8", "replace"), keep_newlines=False)
            raise AdapterFault("protocol", f"{self.name}: {_BEFORE}{shown}")
        request = wire.handshake_request(0)
        _, stderr_before = self._send([("handshake", request)])
        self._launched = (request, stderr_before)

    def _start(self) -> None:
        if self._handshake is not None:
            if self.restarts >= self.restart_budget:
                raise AdapterFault(
                    "crash",
                    f"{self.name}: restart budget exhausted ({self.restart_budget} restarts); "
                    "the implementation keeps failing, so the remaining calls are not sent",
                )
            self.restarts += 1
        if self._launched is None or self._process is None:
            self._spawn()
        assert self._launched is not None
        assert self._process is not None
        (request, stderr_before), self._launched = self._launched, None
        process = self._process
        # Built directly, starting a runtime gets at least 30 s; the CLI and the pytest
        # plugin always set startup_timeout from --timeout / --handshake-timeout (D-311).
        startup = self.startup_timeout or max(self.timeout, 30.0)
        try:
            first = [("handshake", request)]
            reply = self._read(process, first, startup, stderr_before, False)[0]
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
            raise AdapterFault("protocol", f"{self.name}: {_BEFORE}{detail}") from None
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
        pending, self._pending = self._pending, None
        if pending is not None:  # not waited for: its replies go with the process
            pending.fail(AdapterFault("crash", f"{self.name}: the adapter is closed"))
        process, self._process = self._process, None
        self._launched = None
        if process is not None:
            process.shutdown(wire.encode(wire.request(self._take_id(), "shutdown", {})))

    def _drop(self) -> None:
        """Kill the current process; the next call starts a fresh one."""
        process, self._process = self._process, None
        self._launched = None
        if process is not None:
            process.kill()

    def _take_id(self) -> int:
        self._next_id += 1
        return self._next_id - 1

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.popen.pid


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
