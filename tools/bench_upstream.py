"""Side by side: the reference model vs the published release, on the same inputs.

    python tools/bench_upstream.py [--rounds N] [--seconds S] [--out reports/performance.md]
                                   [--run-ratio FILE]
    python tools/bench_upstream.py --transport [--rounds N]   # the transport rows only

Each row is a sequence of adapter operations (``uri.encode``, ``retention.retain``, …)
with fixed arguments.  The model runs them through the in-process reference adapter in a
Python timing loop; the release runs them through the upstream adapter's own op handlers
(adapters/upstream/*.mjs, the published npm packages) in a Node timing loop
(tools/bench_upstream.mjs), so neither side pays for process start-up or the protocol.
Rounds alternate model and upstream on every row; each side's first result must be
identical (as JSON) before anything is timed.  The result is the ratio model / upstream
(below 1.0: the model is faster), the median over rounds with its range.

Two more rows have no upstream counterpart: the subprocess transport (pipelined calls to
the served reference model vs a bare JSON-lines echo process) and retention against one
linear pass over the text bytes.  The peak memory of preparing a large source is measured
in a child process.  ``--out`` writes the table as Markdown (reports/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NODE_DRIVER = ROOT / "tools" / "bench_upstream.mjs"

Calls = list[tuple[str, dict[str, Any]]]


# --- inputs ---------------------------------------------------------------------------------

ID_SHORT = "source-session"
ID_1K = ('session/引号"\\\n' * 80)[:1024]
ID_1K_LONE = ID_1K[:500] + "\ud800" + ID_1K[501:]


def mention_text() -> str:
    """64 KiB of prose with three mentions (tests/benchmarks/test_bench_uri.py)."""
    from dsh_conformance.model import mentions, uri

    mention = mentions.format_mention("source-session", "Source")
    filler = "lorem ipsum dolor sit amet, 引号 consectetur [x](y) @ not-a-mention " * 300
    chunk = filler[: 64 * 1024 // 3]
    return chunk + mention + chunk + uri.encode("b") + " " + chunk + mention


def session_json(messages: int, size: int = 2_000) -> dict[str, Any]:
    """A source of alternating user/assistant messages of about *size* bytes each."""
    filler = "lorem ipsum <dolor> sit amet 界 " * (size // 20)
    events: list[dict[str, Any]] = []
    for i in range(messages):
        text = (f"message {i}: " + filler)[:size]
        block = [{"type": "text", "text": text}]
        if i % 2 == 0:
            data: dict[str, Any] = {"content": block, "source": {"kind": "user"}}
            type_ = "user/message"
        else:
            data = {"turn": i, "step": 0, "content": block}
            type_ = "assistant/message"
        events.append({"type": type_, "seq": i, "time": i, "data": data, "surfaceOp": "append"})
    return {"header": {"version": 0, "id": "big", "createdAt": 1, "cwd": "/w"}, "events": events}


#: The message that references the source in every preparation row.
PREPARE_CONTENT: list[dict[str, Any]] = [{"type": "text", "text": "what did @big decide?"}]


def prepare_args(session: dict[str, Any]) -> dict[str, Any]:
    """``prepare`` arguments: the target's message referencing *session* as ``big``."""
    return {
        "target": {"id": "target"},
        "content": PREPARE_CONTENT,
        "references": [{"sessionId": "big"}],
        "sessions": {"big": session},
    }


def text_bytes(session: dict[str, Any]) -> int:
    """UTF-8 bytes of the message texts of a ``session_json`` source."""
    from dsh_conformance.model import jsstr

    return sum(jsstr.utf8_length(e["data"]["content"][0]["text"]) for e in session["events"])


def snapshot_json(messages: int) -> dict[str, Any]:
    session = session_json(messages)
    header = session["header"]
    return {
        "session": {"id": header["id"], "cwd": header["cwd"]},
        "capturedThroughSeq": messages - 1,
        "events": session["events"],
    }


def rows(quick: bool) -> list[tuple[str, Calls]]:
    """(row name, call sequence) for every model-vs-upstream row."""
    from dsh_conformance.model import uri

    out: list[tuple[str, Calls]] = []
    for what, sid in (
        ("short id", ID_SHORT),
        ("1 KiB id", ID_1K),
        ("1 KiB id, one lone surrogate", ID_1K_LONE),
    ):
        calls: Calls = [
            ("uri.encode", {"sessionId": sid}),
            ("uri.decode", {"uri": uri.encode(sid)}),
        ]
        out.append((f"URI encode + decode, {what}", calls))
    out.append(
        ("mention parse, 64 KiB text, 3 mentions", [("mention.parse", {"text": mention_text()})])
    )
    # Upstream's retention is quadratic (~4 s at 250 messages, ~15 s at 500 here).
    sizes = (250,) if quick else (250, 500)
    retained = _model_call("retention.retain", {"snapshot": snapshot_json(1000)})
    out.append(
        (
            "tag-safe serialization, 64 KiB data object",
            [("json.tagSafe", {"value": retained["data"]})],
        )
    )
    out.append(
        ("projection, 1,000 messages", [("projection.project", {"snapshot": snapshot_json(1000)})])
    )
    for n in sizes:
        calls = [("retention.retain", {"snapshot": snapshot_json(n)})]
        out.append((f"retention, {n:,} messages of ~2 KB, 64 KiB cap", calls))
    session = session_json(250)  # upstream builds its real store: ~5 s per call at 250
    out.append(("preparation, 250 messages of ~2 KB", [("prepare", prepare_args(session))]))
    return out


# --- the two timing loops -------------------------------------------------------------------

_ADAPTER: Any = None


def _model_call(op: str, args: dict[str, Any]) -> Any:
    global _ADAPTER
    if _ADAPTER is None:
        from dsh_conformance.adapters.reference import ReferenceAdapter

        _ADAPTER = ReferenceAdapter()
    return _ADAPTER.call(op, args)


def time_model(calls: Calls, n: int) -> float:
    """Seconds for *n* runs of the call sequence through the reference adapter's op
    handlers, in-process: the counterpart of the Node loop, which calls the upstream
    adapter's handlers directly (neither side pays for its adapter's dispatch)."""
    from dsh_conformance.adapters.reference import REGISTRY

    _model_call("reset", {})  # loads the op modules
    state = _ADAPTER.state
    handlers = [(REGISTRY[op].handler, args) for op, args in calls]
    start = time.perf_counter()
    for _ in range(n):
        for handler, args in handlers:
            handler(state, args)
    return time.perf_counter() - start


class Node:
    """The Node timing loop (tools/bench_upstream.mjs), one long-lived process."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            ["node", str(NODE_DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )

    def run(self, calls: Calls, n: int) -> tuple[Any, float]:
        from dsh_conformance.model import jsstr

        assert self.process.stdin is not None
        assert self.process.stdout is not None
        request = {"calls": [[op, args] for op, args in calls], "n": n}
        self.process.stdin.write((jsstr.stringify(request) + "\n").encode())
        self.process.stdin.flush()
        reply = jsstr.canonical_value(json.loads(self.process.stdout.readline()))
        assert isinstance(reply, dict)
        if "error" in reply:
            raise RuntimeError(f"upstream failed: {reply['error']}")
        return reply["result"], float(reply["seconds"])

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def comparable(op: str, result: Any) -> Any:
    """What must be identical on both sides.  For ``prepare`` that is the prompt text the
    model receives (the release returns its context without placement and metadata, a
    known divergence: adapters/expectations/upstream.toml)."""
    if op == "prepare":
        return [block["text"] for block in result["contexts"][0]["content"]]
    return result


def check_identical(name: str, calls: Calls, node: Node) -> float:
    """Fail unless both sides give the same result; return upstream's time for one run."""
    from dsh_conformance.model import jsstr

    model_result: Any = None
    for op, args in calls:
        model_result = _model_call(op, args)
    upstream_result, once = node.run(calls, 1)
    op = calls[-1][0]
    ours = jsstr.stringify(comparable(op, model_result))
    theirs = jsstr.stringify(comparable(op, upstream_result))
    if ours != theirs:
        raise SystemExit(f"{name}: model and upstream disagree; nothing timed")
    return once


#: An upstream call slower than this (seconds) is timed once, not in rounds.
SLOW_CALL = 0.5


def calibrate(timer: Callable[[int], float], budget: float) -> int:
    """Iterations that take about *budget* seconds."""
    n = 1
    while True:
        spent = timer(n)
        if spent >= budget / 4 or n >= 1 << 22:
            return max(1, int(n * budget / max(spent, 1e-9)))
        n *= 4


def pure(run: Callable[[], float]) -> float:
    """*run* with the model on its pure-Python forms (the accelerator switched off)."""
    from dsh_conformance.model import jsstr

    saved, jsstr._FAST = jsstr._FAST, None
    try:
        return run()
    finally:
        jsstr._FAST = saved


def compare(name: str, calls: Calls, node: Node, rounds: int, budget: float) -> dict[str, Any]:
    once = check_identical(name, calls, node)
    n_model = calibrate(lambda n: time_model(calls, n), budget)
    n_pure = calibrate(lambda n: pure(lambda: time_model(calls, n)), budget)
    # Upstream's quadratic retention takes seconds per call: its one checked run is its
    # timing (the ratio is then far below 1.0 for any noise).
    slow = once > SLOW_CALL
    n_node = 1 if slow else calibrate(lambda n: node.run(calls, n)[1], budget)
    ratios, pure_ratios, model_times, node_times = [], [], [], []
    for _ in range(rounds):
        ours = time_model(calls, n_model) / n_model
        theirs = once if slow else node.run(calls, n_node)[1] / n_node
        plain = pure(lambda: time_model(calls, n_pure)) / n_pure
        model_times.append(ours)
        node_times.append(theirs)
        ratios.append(ours / theirs)
        pure_ratios.append(plain / theirs)
    return {
        "row": name,
        "ratio": statistics.median(ratios),
        "low": min(ratios),
        "high": max(ratios),
        "pure": statistics.median(pure_ratios),
        "model_us": statistics.median(model_times) * 1e6,
        "upstream_us": statistics.median(node_times) * 1e6,
    }


# --- rows without an upstream counterpart --------------------------------------------------

ECHO_LOOP = """
import os, sys
import orjson
out = sys.stdout.buffer
buffer = b""
while True:
    chunk = os.read(0, 1 << 16)
    if not chunk:
        break
    buffer += chunk
    *lines, buffer = buffer.split(b"\\n")
    replies = []
    for line in lines:
        request = orjson.loads(line)
        replies.append(orjson.dumps({"id": request["id"], "result": request["args"]["sessionId"]}))
    if replies:
        out.write(b"\\n".join(replies) + b"\\n")
        out.flush()
"""


#: The same loop answering with the model's own ``uri.encode``: what a served model costs
#: with no transport around it but the cheapest JSON-lines loop.
ECHO_MODEL_LOOP = ECHO_LOOP.replace(
    "import orjson", "import orjson\nfrom dsh_conformance.model.uri import encode"
).replace('request["args"]["sessionId"]', 'encode(request["args"]["sessionId"])')


def transport(rounds: int, batch: int = 2000) -> list[dict[str, Any]]:
    """Pipelined ``uri.encode`` calls through the subprocess adapter vs two floors.

    Each echo child parses a request line with orjson and answers ``{id, result}``: the
    bare one echoes the session id, the other answers with the model's ``uri.encode``
    (the served model's work with none of the transport).  Their client writes the same
    number of orjson-encoded request lines and parses every reply: the cheapest
    JSON-lines exchange Python can do, with no checks.  All three run interleaved.
    """
    import orjson

    from dsh_conformance.adapters.subprocess import SubprocessAdapter
    from dsh_conformance.model import uri

    calls = [("uri.encode", {"sessionId": f"session-{i}"}) for i in range(batch)]
    adapter = SubprocessAdapter([sys.executable, "-m", "dsh_conformance.adapters.serve"])
    adapter.handshake()
    echoes = [
        subprocess.Popen(
            [sys.executable, "-c", loop], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        for loop in (ECHO_LOOP, ECHO_MODEL_LOOP)
    ]

    def run_echo(echo: subprocess.Popen[bytes]) -> Callable[[], float]:
        def run() -> float:
            assert echo.stdin is not None
            assert echo.stdout is not None
            cpu[0] = _cpu(echo.pid)
            start = time.perf_counter()
            data = b"".join(
                orjson.dumps({"id": i, "op": op, "args": args}) + b"\n"
                for i, (op, args) in enumerate(calls)
            )
            echo.stdin.write(data)
            echo.stdin.flush()
            for _ in range(batch):
                orjson.loads(echo.stdout.readline())
            elapsed = time.perf_counter() - start
            cpu[1] = _cpu(echo.pid) - cpu[0]
            return elapsed

        return run

    def run_adapter() -> float:
        assert adapter.pid is not None
        cpu[0] = _cpu(adapter.pid)
        start = time.perf_counter()
        replies = adapter.call_many(calls)
        elapsed = time.perf_counter() - start
        cpu[1] = _cpu(adapter.pid) - cpu[0]
        assert replies[-1] == uri.encode(calls[-1][1]["sessionId"])
        return elapsed

    cpu = [0.0, 0.0]  # both ends' CPU seconds at the start of a run, then during it

    floors = [run_echo(echo) for echo in echoes]
    try:
        for _ in range(3):
            run_adapter()
            for floor in floors:
                floor()
        ours: list[float] = []
        ours_cpu: list[float] = []
        times: list[list[float]] = [[] for _ in floors]
        cpus: list[list[float]] = [[] for _ in floors]
        for _ in range(rounds * 8):  # a pair is ~15 ms: many pairs tame a noisy machine
            ours.append(run_adapter())
            ours_cpu.append(cpu[1])
            for got, got_cpu, floor in zip(times, cpus, floors, strict=True):
                got.append(floor())
                got_cpu.append(cpu[1])
    finally:
        adapter.close()
        for echo in echoes:
            assert echo.stdin is not None
            echo.stdin.close()
            echo.wait(timeout=30)
    rows = []
    # The floor of the floors: the echo doing the model's work over the bare echo, pair by
    # pair (what even a transport costing nothing would add to the bare echo).
    floors = [a / b for a, b in zip(times[1], times[0], strict=True)]
    floors_cpu = [a / b for a, b in zip(cpus[1], cpus[0], strict=True)]
    for goal, name, floor_times, floor_cpu in zip(
        ("transport-bare", "transport-model"),
        ("a bare echo", "an echo answering with the model's uri.encode"),
        times,
        cpus,
        strict=True,
    ):
        ratios = [a / b for a, b in zip(ours, floor_times, strict=True)]
        cpu_ratios = [a / b for a, b in zip(ours_cpu, floor_cpu, strict=True)]
        rows.append(
            {
                "row": f"subprocess transport, {batch:,} pipelined calls, vs {name}",
                "ratio": statistics.median(ratios),
                "low": min(ratios),
                "high": max(ratios),
                "model_us": statistics.median(ours) * 1e6 / batch,
                "upstream_us": statistics.median(floor_times) * 1e6 / batch,
                "cpu_ratio": statistics.median(cpu_ratios),
                "cpu_low": min(cpu_ratios),
                "cpu_high": max(cpu_ratios),
                "fastest_ratio": min(ours) / min(floor_times),
                "goal": goal,
                "calls": batch,
                "floors_ratio": statistics.median(floors),
                "floors_cpu_ratio": statistics.median(floors_cpu),
            }
        )
    return rows


def print_transport(row: dict[str, Any]) -> None:
    """One transport row on the terminal: wall and CPU ratios with their ranges."""
    print(
        f"{row['ratio']:6.2f}  ({row['low']:.2f}-{row['high']:.2f}, fastest "
        f"{row['fastest_ratio']:.2f}; CPU {row['cpu_ratio']:.2f}, {row['cpu_low']:.2f}-"
        f"{row['cpu_high']:.2f})  {row['model_us']:.2f} us vs {row['upstream_us']:.2f} us  "
        f"{row['row']} (the floors: {row['floors_ratio']:.2f}, CPU "
        f"{row['floors_cpu_ratio']:.2f})",
        flush=True,
    )


def _cpu(pid: int) -> float:
    """CPU seconds of this process plus those of its child *pid* so far (both ends of a
    pipe; the child's from /proc/PID/schedstat, in nanoseconds, where Linux has it)."""
    try:
        with open(f"/proc/{pid}/schedstat", encoding="ascii") as stat:
            child = int(stat.read().split()[0]) / 1e9
    except OSError:
        child = 0.0
    return time.process_time() + child


def retention_floor(rounds: int, messages: int = 1000) -> list[dict[str, Any]]:
    """Retention vs one linear pass over its text bytes (UTF-8 encoding every message text
    once, the least work that learns every byte count): of a parsed snapshot, and as the
    ``retention.retain`` op receives it, from JSON (parsing and checking it included)."""
    from dsh_conformance.model.retention import retain
    from dsh_conformance.model.snapshot import SessionSnapshot

    as_json = snapshot_json(messages)
    snapshot = SessionSnapshot.from_json(as_json)
    texts = [e.data["content"][0]["text"] for e in snapshot.events]
    args = {"snapshot": as_json}
    return [
        _against_floor(
            f"retention of {messages:,} messages vs one linear pass over their bytes",
            lambda: retain(snapshot, "big"),
            texts,
            rounds,
        ),
        _against_floor(
            f"the retention.retain op on {messages:,} messages given as JSON, vs the same pass",
            lambda: _model_call("retention.retain", args),
            texts,
            rounds,
        ),
    ]


def _against_floor(
    name: str, work: Callable[[], object], texts: Sequence[str], rounds: int
) -> dict[str, Any]:
    """*work* against UTF-8-encoding *texts* once, interleaved *rounds* times."""

    def floor(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            for text in texts:
                text.encode("utf-8", "surrogatepass")
        return time.perf_counter() - start

    def ours(n: int) -> float:
        start = time.perf_counter()
        for _ in range(n):
            work()
        return time.perf_counter() - start

    n = calibrate(ours, 0.2)
    ratios, a_times, b_times = [], [], []
    for _ in range(rounds):
        a, b = ours(n) / n, floor(n) / n
        a_times.append(a)
        b_times.append(b)
        ratios.append(a / b)
    return {
        "row": name,
        "ratio": statistics.median(ratios),
        "low": min(ratios),
        "high": max(ratios),
        "model_us": statistics.median(a_times) * 1e6,
        "upstream_us": statistics.median(b_times) * 1e6,
    }


#: The start of every Python memory child: its own peak RSS, read before anything else.
_PEAK_PRELUDE = """
import resource, sys
def peak():
    # VmHWM is this program's own high-water mark; ru_maxrss also keeps the peak of the
    # process that forked it, from before exec.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
start = peak()
"""

MEMORY_CHILD = (
    _PEAK_PRELUDE
    + """
sys.path.insert(0, sys.argv[1])
from bench_upstream import prepare_args, session_json, text_bytes
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.model import jsstr
adapter = ReferenceAdapter()
imported = peak()
session = session_json(int(sys.argv[2]))
text = text_bytes(session)
args = prepare_args(session)
built = peak()
result = adapter.call("prepare", args)
top = peak()
import hashlib, json  # after the peaks: not part of the measured process
digest = hashlib.sha256(jsstr.stringify_bytes(args)).hexdigest()
print(json.dumps({"text": text, "start": start, "imported": imported, "built": built,
                  "peak": top, "input": digest, "result": result}))
"""
)

#: The Node counterpart of MEMORY_CHILD: the same input, the upstream prepare handler.
NODE_MEMORY_CHILD = ROOT / "tools" / "bench_memory.mjs"


def _peaks(argv: list[str]) -> dict[str, Any]:
    """One memory child's report (see MEMORY_CHILD)."""
    from dsh_conformance.model import jsstr

    out = subprocess.run(argv, capture_output=True, check=True, cwd=ROOT).stdout
    report = jsstr.canonical_value(json.loads(out))
    assert isinstance(report, dict)
    return report


def _breakdown(report: dict[str, Any]) -> dict[str, float]:
    text = report["text"]
    return {
        "ratio": report["peak"] / text,
        "interpreter": report["start"] / text,
        "imports": (report["imported"] - report["start"]) / text,
        "source": (report["built"] - report["imported"]) / text,
        "prepare": (report["peak"] - report["built"]) / text,
        "peak_mb": report["peak"] / 1e6,
        "text_mb": text / 1e6,
    }


def memory(messages: int = 10_000) -> dict[str, Any]:
    """Peak RSS of a process that builds a JSON source and prepares it, over its text,
    with the steps on the way: the interpreter, the imports, the source as the Python
    objects an adapter receives, and what preparation adds on top."""
    report = _peaks([sys.executable, "-c", MEMORY_CHILD, str(ROOT / "tools"), str(messages)])
    return {
        "row": f"peak memory preparing {messages:,} messages "
        f"({report['text'] / 1e6:.1f} MB of text)",
        **_breakdown(report),
    }


STORED_MEMORY_CHILD = (
    _PEAK_PRELUDE
    + """
import json
from dsh_conformance.model.prepare import prepare
from dsh_conformance.model.stored import StoredLogs
imported = peak()
content = json.loads(sys.argv[2])
with StoredLogs({"big": sys.argv[1]}) as store:
    run = prepare("target", content, [{"sessionId": "big"}], store.read)
top = peak()
print(json.dumps({"start": start, "imported": imported, "built": imported, "peak": top,
                  "result": run.to_json()}))
"""
)


def memory_stored(messages: int = 10_000) -> dict[str, Any]:
    """Peak RSS of a process that prepares the same source from its stored log
    (model/stored.py: the log streamed, only retained texts read back), over its text.
    Checked identical to preparing the source as data."""
    import tempfile

    from dsh_conformance.model import jsstr
    from dsh_conformance.model.stored import write_log

    session = session_json(messages)
    text = text_bytes(session)
    expected = _model_call("prepare", prepare_args(session))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "big.jsonl"
        write_log(path, session)
        del session
        content = jsstr.stringify(PREPARE_CONTENT)
        report = _peaks([sys.executable, "-c", STORED_MEMORY_CHILD, str(path), content])
    if jsstr.stringify(report["result"]) != jsstr.stringify(expected):
        raise SystemExit("memory: preparing from the stored log disagrees with the data path")
    report["text"] = text
    return {
        "row": f"peak memory preparing {messages:,} messages from their stored log "
        f"({text / 1e6:.1f} MB of text)",
        **_breakdown(report),
    }


#: A served reference model with the large-request path off (adapters/large_request.py):
#: every request parsed whole, the data path.
SERVED_DATA_PATH = (
    "import sys\n"
    "from dsh_conformance.adapters import serve\n"
    "serve.LARGE_LINE = 1 << 62\n"
    "raise SystemExit(serve.main(sys.argv[1:]))\n"
)


def _served_peak(argv: list[str], line: bytes) -> tuple[int, bytes]:
    """Peak RSS (VmHWM) of the served process *argv* once it has answered *line*, and
    its reply.  Read from /proc while it waits for its next request: the real served
    process, nothing added to it."""
    child = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        child.stdin.write(line)
        child.stdin.flush()
        reply = child.stdout.readline()
        with open(f"/proc/{child.pid}/status", encoding="ascii") as status:
            peak = next(int(s.split()[1]) * 1024 for s in status if s.startswith("VmHWM:"))
    finally:
        child.stdin.close()
        child.wait(timeout=60)
    return peak, reply


def memory_wire(messages: int = 10_000, data_path: bool = True) -> dict[str, Any]:
    """Peak RSS of the served reference model (``python -m dsh_conformance.adapters.serve``)
    answering one prepare request of *messages* messages from its line, over the text:
    the line is spooled to an anonymous file as it arrives and its sessions streamed
    from their spans (adapters/line_spool.py, adapters/large_request.py, D-491, D-485).
    Beside it, the same served process with that path off (the request parsed whole: the
    data path) on the same line.  Both replies are checked identical to the in-process
    data path's, byte for byte.

    The steps: the interpreter (a bare ``python -c``), the served process's imports (its
    peak after a handshake), and what answering the request adds on top (``prepare``:
    the spool's buffers and preparation's summaries); ``line`` is the request line's
    size, which the process never holds.
    *data_path* False skips the served data path (its loop reads a line by concatenating
    64 KiB reads: quadratic, hours for a line of a few hundred MB)."""
    from dsh_conformance.adapters import wire

    session = session_json(messages)
    text = text_bytes(session)
    args = prepare_args(session)
    expected = wire.encode(wire.result(1, _model_call("prepare", args)))
    line = wire.encode(wire.request(1, "prepare", args))
    del session, args
    served = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
    handshake = wire.encode(wire.handshake_request(1))
    imported, _ = _served_peak(served, handshake)
    bare = _PEAK_PRELUDE + "import json\nprint(json.dumps({'start': start}))"
    start = _peaks([sys.executable, "-c", bare])["start"]
    peak, reply = _served_peak(served, line)
    report = {"text": text, "start": start, "imported": imported, "built": imported}
    row = {
        "row": f"peak memory of the served model preparing {messages:,} messages from the "
        f"request line ({text / 1e6:.1f} MB of text, a {len(line) / 1e6:.1f} MB line)",
        **_breakdown({**report, "peak": peak}),
        "line": len(line) / text,
    }
    if data_path:
        data_peak, data_reply = _served_peak([sys.executable, "-c", SERVED_DATA_PATH], line)
        if data_reply != expected:
            raise SystemExit("memory: the served data path disagrees with the in-process one")
        row["data_path"] = _breakdown({**report, "peak": data_peak})
    if reply != expected:
        raise SystemExit("memory: the served reply disagrees with the in-process data path")
    return row


def memory_vs_upstream(messages: int = 2_000) -> dict[str, Any]:
    """The same measurement on both sides: the model's process and a Node process running
    the upstream prepare handler, on the same input (its JSON's hash checked equal) with
    the same prompt text out.  Upstream's retention is quadratic: 2,000 messages take it
    about a minute, 10,000 far longer."""
    ours = _peaks([sys.executable, "-c", MEMORY_CHILD, str(ROOT / "tools"), str(messages)])
    theirs = _peaks(["node", str(NODE_MEMORY_CHILD), str(messages)])
    if ours["input"] != theirs["input"] or ours["text"] != theirs["text"]:
        raise SystemExit("memory: the two children built different inputs; nothing compared")
    if comparable("prepare", ours["result"]) != comparable("prepare", theirs["result"]):
        raise SystemExit("memory: model and upstream disagree; nothing compared")
    model, upstream = _breakdown(ours), _breakdown(theirs)
    return {
        "row": f"peak memory preparing {messages:,} messages "
        f"({ours['text'] / 1e6:.1f} MB of text), whole process",
        "ratio": ours["peak"] / theirs["peak"],
        # None when Node's high-water mark did not rise while preparing (its heap from
        # building the input already covered it): no ratio to a growth of zero.
        "prepare_ratio": (ours["peak"] - ours["built"]) / (theirs["peak"] - theirs["built"])
        if theirs["peak"] > theirs["built"]
        else None,
        "model": model,
        "upstream": upstream,
    }


# --- report ---------------------------------------------------------------------------------


def versions() -> tuple[str, str]:
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return node, platform.python_version()


def accelerator() -> str:
    """Whether the model ran with its C accelerator (the pure-Python forms are slower)."""
    from dsh_conformance.model import jsstr

    return "on" if jsstr._FAST is not None else "off (DSH_CONFORMANCE_PURE or not built)"


def ratio(value: float) -> str:
    """Two decimals, or ``1/N`` when the model is over a hundred times faster."""
    return f"{value:.2f}" if value >= 0.01 else f"1/{1 / value:,.0f}"


def markdown(
    compared: Sequence[dict[str, Any]],
    extra: Sequence[dict[str, Any]],
    mem: dict[str, Any] | None,
    rounds: int,
    mem_vs: dict[str, Any] | None = None,
    mem_stored: dict[str, Any] | None = None,
    run_ratio: dict[str, Any] | None = None,
    mem_wire: Sequence[dict[str, Any]] = (),
) -> str:
    from bench_goals import goals_section

    node, python = versions()
    lines = [
        "# Performance: the reference model vs the published release",
        "",
        "Regenerate with `python tools/bench_upstream.py --out reports/performance.md`.",
        "",
        f"Machine: {platform.machine()}, {platform.system()} {platform.release()}, "
        f"Python {python} ({platform.python_implementation()}), Node {node}; "
        "upstream: the adapters/upstream packages (0.1.0-rc.8); "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} when the report was "
        "written; "
        f"model/_jsfast.c accelerator {accelerator()} "
        "(a shared machine: ranges are wide, medians of interleaved pairs are the figure).",
        "",
        "Method: every row is a fixed sequence of adapter operations on fixed inputs. The",
        "model runs it through the reference adapter's op handlers in a Python timing loop;",
        "the release runs the same operations through the upstream adapter's op handlers in",
        "a Node timing loop (tools/bench_upstream.mjs); both in-process, no dispatch, no",
        "protocol, no start-up. Both results are checked identical first (for preparation:",
        f"the prompt text). Each side's loop runs about the same wall time; {rounds} rounds",
        "alternate the two sides on every row. **The result is the ratio model / upstream**",
        "(below 1.0: the model is faster), the median over rounds with its min-max; the",
        "per-call times only show scale on this machine.",
        "",
        "| operation | model / upstream | range | pure-Python model / upstream "
        "| model µs/call | upstream µs/call |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in compared:
        lines.append(
            f"| {r['row']} | **{ratio(r['ratio'])}** | {ratio(r['low'])}-{ratio(r['high'])} | "
            f"{ratio(r['pure'])} | {r['model_us']:,.1f} | {r['upstream_us']:,.1f} |"
        )
    if extra:
        lines += [
            "",
            "Against a floor rather than upstream (the ratio is model / floor):",
            "",
            "| measurement | ratio | range | fastest / fastest | CPU ratio (range) "
            "| model µs | floor µs |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for r in extra:
            fastest = f"{r['fastest_ratio']:.2f}" if "fastest_ratio" in r else "-"
            cpu = (
                f"{r['cpu_ratio']:.2f} ({r['cpu_low']:.2f}-{r['cpu_high']:.2f})"
                if "cpu_ratio" in r
                else "-"
            )
            lines.append(
                f"| {r['row']} | **{r['ratio']:.2f}** | {r['low']:.2f}-{r['high']:.2f} | "
                f"{fastest} | {cpu} | {r['model_us']:,.1f} | {r['upstream_us']:,.1f} |"
            )
        lines += [
            "",
            "Transport floors: a child that parses each request line with orjson and answers",
            "`{id, result}`, fed by a client that writes orjson request lines and parses every",
            "reply (no checks). The bare echo answers with the session id (no model); the",
            "other answers with the model's own `uri.encode`, so its ratio is the transport's",
            "overhead alone. The three run interleaved on the same 2,000 calls "
            f"({rounds * 8} times each; the ratio is the median of the interleaved pairs;",
            "*fastest / fastest* is the ratio of each side's quickest run, the one the other",
            "helpers' load disturbed least; *CPU ratio* is both ends' CPU time, harness and",
            "child together (/proc/PID/schedstat), per pair: on a loaded 2-core machine the",
            "two ends of a pipe share cores, so the wall time tends to their sum).",
            "Retention floor: UTF-8-encoding every message text of the same snapshot once.",
        ]
    if mem is not None:
        lines += [
            "",
            f"Memory: {mem['row']}: peak RSS of the whole process is **{mem['ratio']:.2f}x** "
            f"the text ({mem['peak_mb']:.1f} MB for {mem['text_mb']:.1f} MB of UTF-8 text): "
            f"the interpreter {mem['interpreter']:.2f}x, the model's imports "
            f"{mem['imports']:.2f}x, the source as the Python objects an adapter receives "
            f"{mem['source']:.2f}x, and **preparation itself {mem['prepare']:.2f}x** on top.",
        ]
    if mem_stored is not None:
        m = mem_stored
        lines += [
            "",
            f"Memory from the stored log: {m['row']}: peak RSS of the whole process is "
            f"**{m['ratio']:.2f}x** the text ({m['peak_mb']:.1f} MB): the interpreter "
            f"{m['interpreter']:.2f}x, the imports {m['imports']:.2f}x, and preparation "
            f"{m['prepare']:.2f}x (model/stored.py streams the JSON Lines log once and keeps "
            "summaries; only the retained texts are read back). Its result is checked "
            "identical to preparing the source as data.",
        ]
    if mem_vs is not None:
        model, upstream = mem_vs["model"], mem_vs["upstream"]
        lines += [
            "",
            f"Memory side by side: {mem_vs['row']}, the model's process against a Node process "
            "running the upstream prepare handler (tools/bench_memory.mjs) on the same input "
            "(the hash of its JSON checked equal) with the same prompt text out: peak RSS "
            f"model / upstream **{ratio(mem_vs['ratio'])}** ({model['peak_mb']:.1f} MB "
            f"against {upstream['peak_mb']:.1f} MB). What preparation adds on top of its "
            f"input: {model['prepare']:.2f}x the text for the model, "
            f"{upstream['prepare']:.2f}x for upstream ("
            + (
                f"model / upstream **{ratio(mem_vs['prepare_ratio'])}**"
                if mem_vs["prepare_ratio"] is not None
                else "Node's peak did not rise while preparing: no ratio"
            )
            + "). Node's own start is "
            f"{upstream['interpreter']:.2f}x this text, the interpreter's "
            f"{model['interpreter']:.2f}x.",
        ]
    lines += ["", *goals_section(extra, mem, mem_stored, run_ratio, mem_wire)]
    lines += ["", "## How the rows got here, and where the model still trails", "", *NOTES]
    return "\n".join(lines) + "\n"


#: What decides the transport and memory rows, measured with callgrind and timeit
#: (issue 15); kept here so a regenerated report keeps them.
NOTES = [
    "- *Transport*: the served model does per call what the bare echo child does not",
    "  (the op's dispatch and the model's work), and the harness checks every reply. Both",
    "  ends read and write lines in Python (adapters/wire.py): orjson where the accelerator's",
    "  `plain` proves its spelling exact, the exact parser and writer otherwise. A run of",
    "  arrived lines is read in one pass (D-484): the harness keeps it when every reply is",
    "  the awaited id's result (adapters/batch.py), the served model answers a run of one",
    "  pure operation by its handler over the lot; anything else takes the line-by-line",
    "  path, which words every fault. The C loops that once read the protocol's own",
    "  spelling were removed (D-208). Replies go out every 256 lines (serve.FLUSH_EVERY),",
    "  so the harness decodes while the server computes, and glibc keeps its freed heap",
    "  (adapters/heap.py: a page fault per request otherwise). Against the bare echo the",
    "  ratio carries the model's own work: the echo that answers with the model's",
    "  `uri.encode` and checks nothing is itself 1.2-1.3x the bare echo (the goals",
    "  table's floor of the floors), so on a loaded machine the bare-echo ratio rises",
    "  above 1.2x while the transport is at its floor; its own cost is read against the",
    "  echo doing the same work (D-535).",
    "- *Retention vs one linear pass*: of a parsed snapshot, projection reads each event",
    "  through a few Python calls; the text bytes are counted once per message (by the",
    "  accelerator). The op from JSON reads the events of the common envelope and the",
    "  messages of one text block in the accelerator (`plain_projection`, D-538), and",
    "  builds one item per message in Python.",
    "- *Whole run*: a `subprocess:` host is started while the harness imports and",
    "  collects, its handshake read at first use; each differential test sends the",
    "  host's request before the oracle computes its own answer; a reply is polled for",
    "  50 us before the harness sleeps in select (D-537). What stays is the host's own",
    "  model work, which the harness waits for, and decoding its replies.",
    "- *Memory*: a source that arrives as JSON objects (the adapter's input) is held as",
    "  Python strings before preparation starts: two bytes per character for this",
    "  CJK-bearing text, against about one in UTF-8, plus the event dictionaries. That",
    "  input alone is more than twice the text, and the interpreter with its imports adds",
    "  about one more; preparation's own share is the last term of that line (frozen event",
    "  copies; strings are shared, never copied). No implementation that receives its",
    "  source as in-memory strings can stay under twice the text: Node keeps this text in",
    "  two-byte strings too, and its own start alone is many times the 2,000-message text",
    "  (the side-by-side line). Preparing from the stored log instead (model/stored.py,",
    "  decision D-165) streams the file once and keeps summaries, so the whole process",
    "  stays near the interpreter's own size (the stored-log line). Over the subprocess",
    "  protocol the served model spools a prepare request of 1 MiB or more to an",
    "  anonymous file as it arrives and reads it back by offset (adapters/line_spool.py,",
    "  adapters/large_request.py, D-491, D-485): what the request adds is preparation's",
    "  summaries and a window of the line, never the line; the interpreter and the served",
    "  model's imports are a fixed 20 MB or so, the larger part of the whole process at",
    "  10,000 messages (the goals table's two sizes, D-536).",
    "- *Pure Python* (the accelerator not built, or `DSH_CONFORMANCE_PURE=1`): the URI and",
    "  mention rows trail upstream (the pure-Python column); every result is the same,",
    "  tests/test_accelerator.py proves the two forms agree.",
]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternations per row")
    parser.add_argument("--seconds", type=float, default=0.15, help="loop time per side")
    parser.add_argument("--out", type=Path, help="write the Markdown report here")
    parser.add_argument("--quick", action="store_true", help="fewer retention sizes")
    parser.add_argument("--only", help="run only rows whose name contains this")
    parser.add_argument("--no-extra", action="store_true", help="skip transport and memory")
    parser.add_argument(
        "--transport",
        action="store_true",
        help="run only the transport rows and print them (no report)",
    )
    parser.add_argument(
        "--run-ratio",
        type=Path,
        metavar="FILE",
        help="JSON from tools/bench_run.py for the goals table's run row "
        "(fields: ratio, low, high, reference_s, other_s, note; tools/bench_goals.py)",
    )
    options = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tools"))
    from bench_goals import read_run_ratio

    if options.transport:
        if options.out is not None:
            parser.error("--transport prints the transport rows only; it writes no report")
        for result in transport(options.rounds):
            print_transport(result)
        return 0
    run_ratio = None if options.run_ratio is None else read_run_ratio(options.run_ratio)
    node = Node()
    compared = []
    try:
        for name, calls in rows(options.quick):
            if options.only and options.only not in name:
                continue
            result = compare(name, calls, node, options.rounds, options.seconds)
            compared.append(result)
            print(
                f"{result['ratio']:6.2f}  ({result['low']:.2f}-{result['high']:.2f}, "
                f"pure {result['pure']:.2f})  "
                f"{result['model_us']:10.1f} us vs {result['upstream_us']:10.1f} us  {name}",
                flush=True,
            )
    finally:
        node.close()
    extra: list[dict[str, Any]] = []
    mem = mem_vs = mem_stored = None
    mem_wire: list[dict[str, Any]] = []
    if not options.no_extra and not options.only:
        for result in transport(options.rounds):
            extra.append(result)
            print_transport(result)
        retention = retention_floor(options.rounds)
        for result in retention:
            extra.append(result)
            print(
                f"{result['ratio']:6.2f}  ({result['low']:.2f}-{result['high']:.2f})  "
                f"{result['row']}"
            )
        # The goals table's retention row: the op as an adapter receives it, from JSON.
        from_json = [r for r in retention if "JSON" in r["row"]]
        if from_json:
            from_json[-1]["goal"] = "retention-json"
        mem = memory()
        print(f"{mem['ratio']:6.2f}  {mem['row']} (preparation itself {mem['prepare']:.2f})")
        mem_stored = memory_stored()
        print(f"{mem_stored['ratio']:6.2f}  {mem_stored['row']}")
        for messages, data_path in ((10_000, True), (50_000, False)):
            mem_wire.append(memory_wire(messages, data_path=data_path))
            print(f"{mem_wire[-1]['ratio']:6.2f}  {mem_wire[-1]['row']}")
        mem_vs = memory_vs_upstream()
        print(
            f"{mem_vs['ratio']:6.2f}  {mem_vs['row']}, model / upstream "
            "(what preparation adds: "
            + ("n/a" if mem_vs["prepare_ratio"] is None else ratio(mem_vs["prepare_ratio"]))
            + ")"
        )
    if options.out is not None:
        options.out.write_text(
            markdown(compared, extra, mem, options.rounds, mem_vs, mem_stored, run_ratio, mem_wire),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
