"""Serve an in-process adapter over the stdio protocol (docs/protocol.md).

``python -m dsh_conformance.adapters.serve`` puts the reference model behind a pipe: the
example of a language-neutral adapter, and the parity partner that shows the wire loses
nothing (the same suite, in-process and over the pipe, must report identically).

The loop reads whatever stdin has, answers every complete line in order, and flushes
once per read: lock-step callers get each reply at once, pipelining callers get batches.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO, Final

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import (
    PROTOCOL_VERSION,
    Adapter,
    AdapterFault,
    ImplementationError,
)

#: Error codes of the protocol layer itself (never raised by a model).
INVALID_REQUEST: Final = "DSH_INVALID_REQUEST"
PROTOCOL_MISMATCH: Final = "DSH_PROTOCOL_MISMATCH"
UNSUPPORTED_OPERATION: Final = "DSH_UNSUPPORTED_OPERATION"
ADAPTER_FAILURE: Final = "DSH_ADAPTER_FAILURE"


class Server:
    """Answer protocol lines with an in-process adapter."""

    def __init__(self, adapter: Adapter, stdin_fd: int = 0, stdout: BinaryIO | None = None):
        self.adapter = adapter
        self.stdin_fd = stdin_fd
        self.stdout: BinaryIO = stdout if stdout is not None else sys.stdout.buffer
        self.pending: list[bytes] = []
        self.running = True

    def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The reply to one parsed request (never raises)."""
        id_ = message.get("id")
        op = message.get("op")
        args = message.get("args", {})
        if not isinstance(id_, str | int | float) or isinstance(id_, bool):
            return wire.error(None, INVALID_REQUEST, "request id must be a string or a number")
        if not isinstance(op, str) or not isinstance(args, dict):
            return wire.error(id_, INVALID_REQUEST, "request needs a string op and object args")
        try:
            if op == "handshake":
                if args.get("protocol") != PROTOCOL_VERSION:
                    return wire.error(
                        id_,
                        PROTOCOL_MISMATCH,
                        f"this adapter speaks protocol {PROTOCOL_VERSION}, "
                        f"not {args.get('protocol')!r}",
                    )
                return wire.result(id_, self.adapter.handshake().to_json())
            if op == "shutdown":
                self.running = False
                return wire.result(id_, None)
            return wire.result(id_, self.adapter.call(op, args))
        except ImplementationError as exc:
            return wire.error(id_, exc.code, exc.message)
        except Exception as exc:  # an adapter bug is still an answer, never a dead pipe
            return wire.error(id_, ADAPTER_FAILURE, f"{type(exc).__name__}: {exc}")

    def handle_line(self, line: bytes) -> None:
        """Queue the reply to one request line (subclasses inject faults here)."""
        try:
            message = wire.decode(line)
        except AdapterFault as exc:
            self.pending.append(wire.encode(wire.error(None, INVALID_REQUEST, exc.message)))
            return
        self.pending.append(self.encode(self.dispatch(message)))

    def encode(self, reply: Mapping[str, Any]) -> bytes:
        try:
            return wire.encode(reply)
        except Exception as exc:  # a result JSON cannot carry
            return wire.encode(wire.error(reply.get("id"), ADAPTER_FAILURE, str(exc)))

    def flush(self) -> None:
        if self.pending:
            self.stdout.write(b"".join(self.pending))
            self.pending.clear()
        self.stdout.flush()

    def serve(self) -> int:
        """Answer requests until shutdown or end of input; return the exit status."""
        buffer = b""
        while self.running:
            chunk = os.read(self.stdin_fd, 1 << 16)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                if line.strip():
                    self.handle_line(line)
                if not self.running:
                    break
            self.flush()
        self.flush()
        self.adapter.close()
        return 0


def build_adapter(name: str) -> Adapter:
    """An in-process adapter by registry name (``reference``, ``python:MODULE:FACTORY``)."""
    from dsh_conformance.adapters.registry import resolve

    if name.startswith(("subprocess", "upstream")):
        raise SystemExit(f"serve: {name!r} is not an in-process adapter")
    return resolve(name)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m dsh_conformance.adapters.serve",
        description="Serve an in-process adapter (default: the reference model) over stdio.",
    )
    parser.add_argument("--adapter", default="reference", help="in-process adapter name")
    parser.add_argument(
        "--capabilities",
        default=None,
        help="comma-separated capabilities to declare (reference model only; default all)",
    )
    options = parser.parse_args(argv)
    adapter: Adapter
    if options.capabilities is not None:
        from dsh_conformance.adapters.reference import ReferenceAdapter

        wanted = {c.strip() for c in options.capabilities.split(",") if c.strip()}
        adapter = ReferenceAdapter(frozenset(wanted))
    else:
        adapter = build_adapter(options.adapter)
    return Server(adapter).serve()


if __name__ == "__main__":
    raise SystemExit(main())
