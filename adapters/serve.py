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
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from typing import Any, BinaryIO, Final

import orjson

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import (
    PROTOCOL_VERSION,
    Adapter,
    AdapterFault,
    ImplementationError,
)
from dsh_conformance.model import jsstr

#: An operation's handler called with its arguments alone (``pure_operations``).
PureHandler = Callable[[Mapping[str, Any]], Any]

#: Error codes of the protocol layer itself (never raised by a model).
INVALID_REQUEST: Final = "DSH_INVALID_REQUEST"
PROTOCOL_MISMATCH: Final = "DSH_PROTOCOL_MISMATCH"
UNSUPPORTED_OPERATION: Final = "DSH_UNSUPPORTED_OPERATION"
ADAPTER_FAILURE: Final = "DSH_ADAPTER_FAILURE"
_ID_TYPES: Final = frozenset({str, int, float})
#: The protocol's own requests, which ``dispatch`` answers; every other op is the adapter's.
_CONTROL_OPS: Final = frozenset({"handshake", "shutdown"})
_DICT_ONLY: Final = {dict}
_get = dict.get
#: Request lines answered between two writes of the replies.
FLUSH_EVERY: Final = 256
#: A request line this long is spooled and answered by adapters/large_request.py (D-491).
LARGE_LINE: Final = 1 << 20


class Server:
    """Answer protocol lines with an in-process adapter."""

    def __init__(self, adapter: Adapter, stdin_fd: int = 0, stdout: BinaryIO | None = None):
        self.adapter = adapter
        self.stdin_fd = stdin_fd
        self.stdout: BinaryIO = stdout if stdout is not None else sys.stdout.buffer
        self.pending: list[bytes] = []
        self.running = True
        #: The adapter's pure operations by name, resolved once (``_answer_all``).
        self._pure: Mapping[str, PureHandler] = _pure_operations(adapter)

    def dispatch(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The reply to one parsed request (never raises)."""
        id_ = message.get("id")
        op = message.get("op")
        args = message.get("args", {})
        if type(id_) not in _ID_TYPES:  # parsed JSON: exact types, and a bool is no id
            return wire.error(None, INVALID_REQUEST, "request id must be a string or a number")
        if type(op) is not str or type(args) is not dict:
            return wire.error(id_, INVALID_REQUEST, "request needs a string op and object args")
        try:
            if op != "handshake" and op != "shutdown":
                return {"id": id_, "result": self.adapter.call(op, args)}  # wire.result
            if op == "handshake":
                offered = args.get("protocol")  # the harness's newest (D-291)
                if type(offered) is not int or offered < PROTOCOL_VERSION:
                    return wire.error(
                        id_,
                        PROTOCOL_MISMATCH,
                        f"this adapter speaks protocol {PROTOCOL_VERSION}, "
                        f"not {args.get('protocol')!r}",
                    )
                return wire.result(id_, self.adapter.handshake().to_json())
            self.running = False  # shutdown
            return wire.result(id_, None)
        except Exception as exc:
            return _failure(id_, exc)

    def handle_line(self, line: bytes) -> None:
        """Queue the reply to one request line (subclasses inject faults here)."""
        try:
            message = wire.decode(line)
        except AdapterFault as exc:
            self.pending.append(self.encode(wire.error(None, INVALID_REQUEST, exc.message)))
            return
        self.pending.append(self.encode(self.dispatch(message)))

    def _unreadable(self, line: bytes) -> dict[str, Any]:
        """The reply to a line orjson read as no object (``wire.decode`` words why)."""
        try:
            return self.dispatch(wire.decode(line))
        except AdapterFault as exc:
            return wire.error(None, INVALID_REQUEST, exc.message)

    def handle_lines(self, lines: Sequence[bytes]) -> None:
        """Queue the replies to the request lines of one read, in order, up to a shutdown.

        A server that keeps this class's ``handle_line`` and ``encode`` answers the lines
        and then encodes their replies together (``wire.encode_all``: one plainness check
        for the lot); what it writes is the same bytes either way."""
        cls = type(self)
        if cls.handle_line is not Server.handle_line or cls.encode is not Server.encode:
            for line in lines:
                if line.strip():
                    self.handle_line(line)
                if not self.running:
                    break
            return
        replies = self._answer_all(lines)
        if replies is None:
            replies = self._answer_each(lines)
        try:
            self.pending.extend(wire.encode_all(replies))
        except Exception:  # a result JSON cannot carry: each reply on its own
            self.pending.extend(map(self.encode, replies))

    def _answer_each(self, lines: Sequence[bytes]) -> list[dict[str, Any]]:
        """The replies to *lines*, one line read at a time (what ``handle_line`` does)."""
        replies: list[dict[str, Any]] = []
        # An operation call goes straight to the adapter (what ``dispatch`` does with it)
        # unless a subclass answers otherwise; anything else is ``dispatch``'s to answer.
        reply = self._reply if type(self).dispatch is Server.dispatch else self.dispatch
        for line in lines:
            if line.strip():
                try:
                    message = wire.decode(line)
                except AdapterFault as exc:
                    replies.append(wire.error(None, INVALID_REQUEST, exc.message))
                    continue
                replies.append(reply(message))
            if not self.running:
                break
        return replies

    def _answer_all(self, lines: Sequence[bytes]) -> list[dict[str, Any]] | None:
        """The replies to *lines* read in one pass, or ``None`` where ``_answer_each``
        must read them one by one; the same replies either way (tests/test_serve_fast_path.py).

        orjson reads every line (one call over the lot), and the accelerator's ``plain``
        proves the whole reading exact at once (``wire.decode``'s test, for all of them):
        a blank, garbage or inexact line sends the lot to ``_answer_each``."""
        if type(self).dispatch is not Server.dispatch:
            return None
        try:
            messages = list(map(orjson.loads, lines))
        except orjson.JSONDecodeError:
            return None
        if not jsstr.quick_plain(messages):
            return None
        uniform = self._answer_run(messages)
        if uniform is not None:
            return uniform
        replies: list[dict[str, Any]] = []
        for line, message in zip(lines, messages, strict=True):
            replies.append(
                self._reply(message) if type(message) is dict else self._unreadable(line)
            )
            if not self.running:
                break
        return replies

    def _reply(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """``dispatch``'s reply, with an operation call handed straight to the adapter: a
        pure operation (``pure_operations``: a function of its arguments alone) runs its
        handler, and if that raises the adapter's own ``call`` answers it again, so the
        error reply is the one ``call`` words; the protocol's own requests and anything
        malformed are ``dispatch``'s."""
        id_, op, args = message.get("id"), message.get("op"), message.get("args")
        if (
            type(op) is str
            and type(args) is dict
            and type(id_) in _ID_TYPES
            and op not in _CONTROL_OPS
        ):
            handler = self._pure.get(op)
            if handler is not None:
                try:
                    return {"id": id_, "result": handler(args)}
                except Exception:  # the adapter's call below words it
                    pass
            try:
                return {"id": id_, "result": self.adapter.call(op, args)}  # wire.result
            except Exception as exc:
                return _failure(id_, exc)
        return self.dispatch(message)

    def _answer_run(self, messages: list[Any]) -> list[dict[str, Any]] | None:
        """The replies to a run of requests of one pure operation, each answered by its
        handler in one pass over the lot; ``None`` for anything else (a message that is no
        object, another op among them, an id or args of the wrong type, a handler that
        raises: the handlers are pure, so answering the lot again one by one is the same)."""
        try:
            ops: list[Any] = list(map(_get, messages, repeat("op")))  # TypeError: no object
        except TypeError:
            return None
        op = ops[0] if ops else None
        handler = self._pure.get(op) if type(op) is str else None
        if handler is None or ops.count(op) != len(ops):
            return None
        ids = list(map(_get, messages, repeat("id")))
        args: list[Any] = list(map(_get, messages, repeat("args")))
        if set(map(type, args)) != _DICT_ONLY or not set(map(type, ids)) <= _ID_TYPES:
            return None
        try:
            results = list(map(handler, args))
        except Exception:
            return None
        return [{"id": id_, "result": result} for id_, result in zip(ids, results, strict=True)]

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
            if b"\n" not in chunk and len(buffer) >= LARGE_LINE:  # one long line so far
                from dsh_conformance.adapters.large_request import answer_line

                buffer = answer_line(self, buffer, Server)
                if not self.running:
                    break  # that line was a shutdown: nothing after it is answered
            *lines, buffer = buffer.split(b"\n")
            # Replies go out every few lines, not once per read: the harness reads the
            # first replies while the rest are answered (a read can hold a thousand).
            for start in range(0, len(lines), FLUSH_EVERY):
                self.handle_lines(lines[start : start + FLUSH_EVERY])
                self.flush()
                if not self.running:
                    break
        if self.running and buffer.strip():
            # The last request may end with end of input instead of a newline: it is
            # still a request (docs/protocol.md), answered like any other.
            self.handle_lines([buffer])
        self.flush()
        self.adapter.close()
        return 0


def _pure_operations(adapter: Adapter) -> Mapping[str, PureHandler]:
    """What *adapter*'s optional ``pure_operations()`` offers: the handlers of operations
    whose result is a function of their arguments alone, called as ``handler(args)``, and
    answered exactly as ``call(op, args)`` answers when they return (an adapter that
    offers none has every call go through ``call``)."""
    offer = getattr(adapter, "pure_operations", None)
    return {} if offer is None else dict(offer())


def _failure(id_: Any, exc: Exception) -> dict[str, Any]:
    """The error reply to a call that raised: its typed error, or an adapter failure (an
    adapter bug is still an answer, never a dead pipe)."""
    if isinstance(exc, ImplementationError):
        return wire.error(id_, exc.code, exc.message)
    return wire.error(id_, ADAPTER_FAILURE, f"{type(exc).__name__}: {exc}")


def build_adapter(name: str) -> Adapter:
    """An in-process adapter by registry name (``reference``, ``python:MODULE:FACTORY``)."""
    from dsh_conformance.adapters.registry import resolve

    if name.startswith(("subprocess", "upstream")):
        raise SystemExit(f"serve: {name!r} is not an in-process adapter")
    return resolve(name)


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    # No arguments (how the harness starts it) are the defaults: argparse, and the shutil
    # its help formatter imports, are 1.2 MB of a served process (issue 44).
    adapter_name, capabilities = _arguments(args) if args else ("reference", None)
    from dsh_conformance.adapters.heap import keep_heap

    keep_heap()  # a page fault per request otherwise (adapters/heap.py)
    adapter: Adapter
    if capabilities is not None:
        from dsh_conformance.adapters.reference import ReferenceAdapter

        wanted = {c.strip() for c in capabilities.split(",") if c.strip()}
        adapter = ReferenceAdapter(frozenset(wanted))
    else:
        adapter = build_adapter(adapter_name)
    return Server(adapter).serve()


def _arguments(argv: Sequence[str]) -> tuple[str, str | None]:
    """The adapter name and ``--capabilities`` of a command line."""
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
    return options.adapter, options.capabilities


if __name__ == "__main__":
    raise SystemExit(main())
