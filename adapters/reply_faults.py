"""What went wrong in an exchange with the implementation's process, as one typed fault.

A reply to another request (out of order, or to none in flight: D-206), a reply that is
neither a result nor an error, an over-long line, a line nobody asked for, silence past
the per-call deadline, an exit: each becomes one ``AdapterFault`` of a stable kind
(``crash``, ``timeout``, ``protocol``) for the call at hand, which the harness scores as
a run problem, never as a requirement's failure, and the broken process is dropped so
that the next call starts a fresh one.  Silence after stderr output is a crash only if
stderr was written during the call, judged on what stderr held by the deadline (D-205).

The mixin of ``SubprocessAdapter`` (adapters/subprocess.py), which owns the process.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence
from typing import Any

import orjson

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import AdapterFault
from dsh_conformance.adapters.process import EOF, Process


class ReplyFaults:
    """The fault classification of ``SubprocessAdapter``: checks of a reply against its
    request, and the fault each way of not answering is."""

    #: The implementation's name, which every fault message starts with.
    name: str
    max_reply_bytes: int
    #: Check every message against spec/schemas/protocol.json.
    validate: bool

    def _drop(self) -> None:
        """Kill the current process (``SubprocessAdapter``'s)."""
        raise NotImplementedError

    def _not_a_reply(self, process: Process, event: tuple[str, bytes], op: str) -> AdapterFault:
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

    def _check_no_stray_reply(self, process: Process, op: str) -> None:
        """Nothing may arrive between exchanges: a second reply to an answered request
        is a protocol violation (scored as a crash), never read as the next answer."""
        process.poll()
        if not process.lines:
            return
        event = process.lines.popleft()
        if event == EOF:
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
        self, process: Process, op: str, id_: Any, timeout: float, stderr_before: int
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

    def _crashed(self, process: Process, op: str) -> AdapterFault:
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
