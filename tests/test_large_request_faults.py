"""Every fault around a long request line reads exactly as on the small path.

The serve loop spools a line that outgrows ``serve.LARGE_LINE`` before its newline
(adapters/line_spool.py) and answers it from the spool (adapters/large_request.py,
D-491).  Fed the same bytes with that path off (every line read whole), it must write the
same bytes: for a line that ends at end of input, invalid JSON deep inside, a line that
is not a prepare (another or unknown op, bad args, a bad id), a shutdown, requests that
follow in the same read, two long lines back to back.  And the harness's pipelined
reading of the replies (adapters/batch.py, D-484) gets what the in-process model gives.

The served loop reads a regular file here (the same chunks every run); the thresholds
are lowered so that lines of a few hundred kilobytes take the long path and the spool's
reads and the scan's windows cut them everywhere.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from dsh_conformance.adapters import large_request, line_spool, serve, wire
from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.model import jsstr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_upstream as inputs

ARGS = inputs.prepare_args(inputs.session_json(100))


def _line(id_: Any, op: Any, args: Any, **top: Any) -> bytes:
    return jsstr.stringify_bytes({"id": id_, "op": op, "args": args, **top}, b"\n")


BIG = _line(1, "prepare", ARGS)
SMALL = [_line(i, "uri.encode", {"sessionId": f"s {i}"}) for i in (7, 8)]
LAST_EVENT = BIG.rindex(b'"seq":')

#: Inputs whose every reply must be the small path's, by what they test.
INPUTS: dict[str, bytes] = {
    "a long prepare, then requests in the same read": BIG + SMALL[0] + SMALL[1],
    "requests, a long prepare, requests": SMALL[0] + BIG + SMALL[1],
    "two long lines back to back": BIG + _line(2, "prepare", {**ARGS, "references": []}),
    "a long line that ends at end of input": SMALL[0] + BIG[:-1],
    "a long line cut inside a string at end of input": BIG[: len(BIG) // 2],
    "invalid JSON deep inside": BIG[:LAST_EVENT] + b"," + BIG[LAST_EVENT:] + SMALL[0],
    "a bracket missing at the end": BIG[:-3] + b"}\n" + SMALL[0],
    "trailing bytes after the object": BIG[:-1] + b" 1\n" + SMALL[0],
    "another op": _line(1, "retention.retain", ARGS) + SMALL[0],
    "an unknown op": _line(1, "no.such.op", ARGS) + SMALL[0],
    "no op": _line(1, None, ARGS) + SMALL[0],
    "args that are not an object": _line(1, "prepare", [ARGS]) + SMALL[0],
    "prepare with references that are no array": _line(1, "prepare", {**ARGS, "references": 1}),
    "prepare with a reference to a missing session": _line(
        1, "prepare", {**ARGS, "references": [{"sessionId": "nope"}]}
    ),
    "a bool id": _line(True, "prepare", ARGS) + SMALL[0],
    "an object id": _line({"n": 1}, "prepare", ARGS) + SMALL[0],
    "a float id": _line(1.5, "prepare", ARGS) + SMALL[0],
    "a long shutdown, then a request": _line(1, "shutdown", ARGS) + SMALL[0],
    "a long line of blanks": b" " * len(BIG) + b"\n" + SMALL[0],
    "a long line that is a JSON array": jsstr.stringify_bytes([ARGS], b"\n") + SMALL[0],
}


def _served(data: bytes) -> bytes:
    """What the in-process serve loop writes, reading *data* from a file."""
    with tempfile.TemporaryFile() as stdin:
        stdin.write(data)
        stdin.seek(0)
        out = io.BytesIO()
        serve.Server(ReferenceAdapter(), stdin_fd=stdin.fileno(), stdout=out).serve()
    return out.getvalue()


@pytest.fixture
def taken(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Long lines from 4 KiB, read and scanned 1 KiB at a time; whether each long line
    was answered from its spool (True) or left to the data path (False)."""
    monkeypatch.setattr(serve, "LARGE_LINE", 1 << 12)
    monkeypatch.setattr(line_spool, "BLOCK", 1 << 10)
    answered: list[bool] = []
    answer = large_request._answer

    def spy(*args: Any) -> bytes | None:
        reply = answer(*args)
        answered.append(reply is not None)
        return reply

    monkeypatch.setattr(large_request, "_answer", spy)
    return answered


def _small_path(data: bytes) -> bytes:
    saved = serve.LARGE_LINE
    serve.LARGE_LINE = 1 << 62
    try:
        return _served(data)
    finally:
        serve.LARGE_LINE = saved


@pytest.mark.parametrize("why", INPUTS)
def test_a_long_line_reads_as_on_the_small_path(why: str, taken: list[bool]) -> None:
    data = INPUTS[why]
    expected = _small_path(data)
    assert _served(data) == expected, why
    assert taken, "the long path was not entered"  # the input did reach it


def test_the_long_path_answers_the_valid_prepares_itself(taken: list[bool]) -> None:
    replies = _served(INPUTS["two long lines back to back"]).splitlines()
    assert taken == [True, True]
    assert [jsstr.parse_bytes(r)["id"] for r in replies] == [1, 2]
    _served(INPUTS["invalid JSON deep inside"])
    assert taken[2:] == [False]  # left to the data path, which words the error


#: A served model whose long-line thresholds are those of the ``taken`` fixture.
SERVED_SMALL_THRESHOLDS = (
    "import sys\n"
    "from dsh_conformance.adapters import line_spool, serve\n"
    "serve.LARGE_LINE = 1 << 12\n"
    "line_spool.BLOCK = 1 << 10\n"
    "raise SystemExit(serve.main(sys.argv[1:]))\n"
)


def _in_process(calls: list[tuple[str, Any]]) -> list[Any]:
    adapter = ReferenceAdapter()
    out: list[Any] = []
    for op, args in calls:
        try:
            out.append(jsstr.parse_bytes(jsstr.stringify_bytes(adapter.call(op, args), b"")))
        except ImplementationError as exc:
            out.append((exc.code, exc.message))
    return out


@pytest.mark.parametrize("validate", [False, True])
def test_the_pipelined_reading_of_long_replies_is_the_in_process_models(validate: bool) -> None:
    """``call_many`` reads the replies in one pass (D-484) or, with --validate, line by
    line: both give what the model gives in process, long requests among short ones."""
    calls: list[tuple[str, Any]] = [
        ("uri.encode", {"sessionId": "a b"}),
        ("prepare", ARGS),
        ("prepare", {**ARGS, "references": [{"sessionId": "nope"}]}),
        ("uri.encode", {"sessionId": "c"}),
        ("prepare", {**ARGS, "references": 1}),
    ]
    adapter = SubprocessAdapter(
        [sys.executable, "-c", SERVED_SMALL_THRESHOLDS], timeout=60, validate=validate
    )
    try:
        got = [
            (r.code, r.message) if isinstance(r, ImplementationError) else r
            for r in adapter.call_many(calls)
        ]
    finally:
        adapter.close()
    assert got == _in_process(calls)
    assert isinstance(got[1], dict)  # prepare's result
    assert got[2][0] == "SESSION_REFERENCE_READ_FAILED"  # its typed errors
    assert got[4][0] == "SESSION_REFERENCE_INVALID_REFERENCE"


def test_the_served_process_answers_a_long_line_written_in_pieces() -> None:
    """Through a pipe the reads cut the line anywhere: the same reply as the data path."""
    data = BIG + SMALL[0] + _line(9, "shutdown", {})
    child = subprocess.run(
        [sys.executable, "-c", SERVED_SMALL_THRESHOLDS],
        input=data,
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert child.stdout == _small_path(data)
    assert len(child.stdout.splitlines()) == 3
    assert wire.decode(child.stdout.splitlines()[0])["id"] == 1
