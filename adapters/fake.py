"""A scriptable broken adapter: the self-test kit for harnesses and adapter authors.

``python -m dsh_conformance.adapters.fake --fault KIND[=PARAM][:OP][@N[+]] …`` serves
the reference model over the stdio protocol, misbehaving on cue:

=================  ===========================================================================
``hang``           stop answering (a timeout)
``stderr-silence`` write to stderr, then stop answering (Bowtie's "said something and went quiet")
``crash[=STATUS]`` write to stderr and exit (default status 3)
``garbage``        answer with a line that is not JSON (with ANSI escapes in it)
``wrong-id``       answer with another request's id
``flood-stderr[=BYTES]``  write BYTES (default 1 MiB) to stderr, then answer correctly
``ansi``           answer with a typed error whose message holds ANSI/OSC escapes and markup
``oversized[=BYTES]``     answer with a result of BYTES (default 20 MiB)
``error[=CODE]``   answer with a typed error (default DSH_ADAPTER_FAILURE)
``bad-protocol``   answer the handshake with protocol version 99
``stall``          stop answering and stay alive even when stdin closes (a hung implementation)
``stall-ignore-term``  the same, ignoring SIGTERM (only SIGKILL ends it)
``stall-grandchild``   start a worker that never answers and wait for it (the hang is in a
                   grandchild: the process the harness started only waits)
``duplicate``      answer correctly, twice
``endless[=BYTES]``  start a reply and never end the line: BYTES (default 20 MiB), no newline
``deep[=LEVELS]``  answer with a result nested LEVELS arrays deep (default 100,000)
``reorder``        answer the requests that arrive together in reverse order (a request
                   that arrives alone is answered normally: only pipelining shows it)
=================  ===========================================================================

``:OP`` limits the fault to one operation (``handshake`` included); ``@N`` fires it on
the Nth matching call only, ``@N+`` from the Nth on; without ``@`` it fires every time.
Counts restart with the process unless ``--state FILE`` keeps them across restarts,
which is how a test says "crash once, then behave".
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from attrs import frozen

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import AdapterFault
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import Server

KINDS: Final = frozenset(
    {
        "hang",
        "stderr-silence",
        "crash",
        "garbage",
        "wrong-id",
        "flood-stderr",
        "ansi",
        "oversized",
        "error",
        "bad-protocol",
        "stall",
        "stall-ignore-term",
        "stall-grandchild",
        "duplicate",
        "endless",
        "deep",
        "reorder",
    }
)
#: What a stalled grandchild runs: nothing, forever (killed with its process group).
_STALL: Final = "import time\nwhile True:\n    time.sleep(60)\n"
_SPEC: Final = re.compile(
    r"(?P<kind>[a-z-]+)(?:=(?P<param>[^:@]+))?(?::(?P<op>[^@]+))?(?:@(?P<n>\d+)(?P<on>\+)?)?"
)
#: What the ``ansi`` and ``garbage`` faults put in front of a person: clear screen,
#: retitle the terminal, red text, a C1 CSI and rich markup.
HOSTILE_TEXT: Final = "\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x9b1m [bold red]markup[/bold red]"


@frozen
class Fault:
    """One scripted misbehaviour."""

    kind: str
    param: str | None = None
    op: str | None = None
    nth: int | None = None
    onwards: bool = False

    @classmethod
    def parse(cls, spec: str) -> Fault:
        match = _SPEC.fullmatch(spec)
        if not match or match["kind"] not in KINDS:
            raise ValueError(
                f"bad fault {spec!r}: write KIND[=PARAM][:OP][@N[+]], KIND one of "
                + ", ".join(sorted(KINDS))
            )
        return cls(
            kind=match["kind"],
            param=match["param"],
            op=match["op"],
            nth=int(match["n"]) if match["n"] else None,
            onwards=bool(match["on"]),
        )

    def matches(self, op: str) -> bool:
        if self.op is not None:
            return op == self.op
        if self.kind == "bad-protocol":
            return op == "handshake"
        return op != "handshake" and op != "shutdown"

    def fires(self, count: int) -> bool:
        if self.nth is None:
            return True
        return count >= self.nth if self.onwards else count == self.nth


class FakeServer(Server):
    """The reference model's server with scripted faults."""

    def __init__(self, faults: Sequence[Fault], state: Path | None = None) -> None:
        super().__init__(ReferenceAdapter())
        self.faults = list(faults)
        self.state = state
        self.counts = self._load_counts()

    def _load_counts(self) -> list[int]:
        if self.state is not None and self.state.exists():
            saved = json.loads(self.state.read_text(encoding="utf-8"))
            if isinstance(saved, list) and len(saved) == len(self.faults):
                return [int(n) for n in saved]
        return [0] * len(self.faults)

    def _save_counts(self) -> None:
        if self.state is not None:
            self.state.write_text(json.dumps(self.counts), encoding="utf-8")

    def handle_line(self, line: bytes) -> None:
        try:
            message = wire.decode(line)
        except AdapterFault:
            super().handle_line(line)
            return
        op = str(message.get("op"))
        fired: Fault | None = None
        for index, fault in enumerate(self.faults):
            if fault.kind != "reorder" and fault.matches(op):
                self.counts[index] += 1
                if fired is None and fault.fires(self.counts[index]):
                    fired = fault
        self._save_counts()
        if fired is None:
            self.pending.append(self.encode(self.dispatch(message)))
        else:
            self.misbehave(fired, message)

    def handle_lines(self, lines: Sequence[bytes]) -> None:
        """Queue the replies to the lines of one read; ``reorder`` reverses them."""
        start = len(self.pending)
        super().handle_lines(lines)
        if any(fault.kind == "reorder" for fault in self.faults):
            self.pending[start:] = self.pending[start:][::-1]

    def misbehave(self, fault: Fault, message: Mapping[str, Any]) -> None:
        id_ = message.get("id")
        kind = fault.kind
        if kind in {"hang", "stderr-silence", "crash"}:
            self.flush()
            if kind != "hang":
                sys.stderr.write(f"fake adapter: fatal {kind} on {message.get('op')!r}\n")
                sys.stderr.flush()
            if kind == "crash":
                os._exit(int(fault.param or 3))
            # Hang: never answer, but leave when the harness closes stdin (or dies), so a
            # killed harness leaves no orphan behind.
            while os.read(self.stdin_fd, 1 << 16):
                pass
            os._exit(0)
        if kind.startswith("stall"):
            self.stall(kind)
        if kind == "duplicate":
            answer = self.encode(self.dispatch(message))
            self.pending += [answer, answer]
        elif kind == "endless":
            self.flush()
            size = int(fault.param or 20 << 20)
            self.stdout.write(b'{"id":' + json.dumps(id_).encode() + b',"result":"')
            for _ in range(size // (1 << 16) + 1):
                self.stdout.write(b"x" * (1 << 16))
            self.stdout.flush()
            self.stall("stall")
        elif kind == "flood-stderr":
            size = int(fault.param or 1 << 20)
            line = b"fake adapter: flooding stderr " + b"." * 70 + b"\n"
            for _ in range(size // len(line) + 1):
                sys.stderr.buffer.write(line)
            sys.stderr.flush()
            self.pending.append(self.encode(self.dispatch(message)))
        elif kind == "deep":
            levels = int(fault.param or 100_000)
            head = b'{"id":' + json.dumps(id_).encode() + b',"result":'
            self.pending.append(head + b"[" * levels + b"]" * levels + b"}\n")
        elif kind == "garbage":
            self.pending.append(f"this is not JSON {HOSTILE_TEXT}\n".encode())
        elif kind == "wrong-id":
            wrong = f"not-{id_}"
            self.pending.append(self.encode({**self.dispatch(message), "id": wrong}))
        elif kind == "ansi":
            sys.stderr.write(HOSTILE_TEXT + "\n")
            self.pending.append(
                wire.encode(wire.error(id_, "DSH_ADAPTER_FAILURE", f"broken {HOSTILE_TEXT}"))
            )
        elif kind == "oversized":
            size = int(fault.param or 20 << 20)
            self.pending.append(wire.encode(wire.result(id_, "x" * size)))
        elif kind == "error":
            code = fault.param or "DSH_ADAPTER_FAILURE"
            self.pending.append(wire.encode(wire.error(id_, code, f"scripted {code}")))
        elif kind == "bad-protocol":
            reply = self.dispatch(message)
            if "result" in reply and isinstance(reply["result"], dict):
                reply["result"]["protocol"] = 99  # newer than any harness
            self.pending.append(self.encode(reply))

    def stall(self, kind: str) -> None:
        """Never answer again, whatever the harness does short of ending the group."""
        self.flush()
        if kind == "stall-ignore-term":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if kind == "stall-grandchild":
            worker = subprocess.Popen([sys.executable, "-c", _STALL])
            worker.wait()
        while True:
            time.sleep(60)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dsh_conformance.adapters.fake",
        description="Serve the reference model over stdio with scripted faults.",
        epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND[=PARAM][:OP][@N[+]]",
        help="a fault to inject (repeatable)",
    )
    parser.add_argument("--state", type=Path, help="keep fault counters across restarts here")
    options = parser.parse_args(argv)
    try:
        faults = [Fault.parse(spec) for spec in options.fault]
    except ValueError as exc:
        parser.error(str(exc))
    return FakeServer(faults, options.state).serve()


if __name__ == "__main__":
    raise SystemExit(main())
