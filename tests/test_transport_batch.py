"""The one-pass reading of pipelined replies (adapters/batch.py, D-484) against the general one.

``SubprocessAdapter.call_many`` reads each run of arrived replies in one pass when every
one is its request's result, and line by line otherwise.  Whatever the lines hold, both
readings must give the same results, or the same fault with the same kind, code and
words (a wrong id, an out-of-order reply, garbage: a run problem, never a requirement's
failure).  The lines are fed to the transport directly, so no process is started.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters import batch, exchange, wire
from dsh_conformance.adapters import subprocess as transport
from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.model import jsstr

Line = bytes | tuple[str, bytes]


class _Fed:
    """A stand-in for the process: the replies arrive once the requests are sent."""

    def __init__(self, lines: Sequence[Line], chunk: int) -> None:
        self.lines: deque[Line] = deque()
        self.ready = [list(lines[i : i + chunk]) for i in range(0, len(lines), chunk)]
        self.stderr_chunks = 0
        self.killed = False

    def poll(self) -> None:
        pass

    def drain_stderr(self) -> bool:
        return True

    def send(self, data: bytes) -> None:
        if self.ready:
            self.lines.extend(self.ready.pop(0))

    def next_line(self, timeout: float) -> Line:
        if not self.ready:
            return transport._EOF
        self.lines.extend(self.ready.pop(0))
        return self.lines.popleft()

    def kill(self) -> None:
        self.killed = True


def _outcome(lines: Sequence[Line], calls: int, chunk: int, one_pass: bool) -> Any:
    adapter = transport.SubprocessAdapter(["unused"])
    fed = _Fed(lines, chunk)
    adapter._process = fed  # type: ignore[assignment]
    adapter._crashed = lambda process, op: AdapterFault("crash", f"ended on {op}")  # type: ignore[method-assign]
    saved = exchange.batch_results  # the one-pass reading, where call_many reads it
    if not one_pass:
        exchange.batch_results = lambda lines, ids: None
    try:
        got = adapter.call_many([("uri.encode", {"sessionId": str(i)}) for i in range(calls)])
    except AdapterFault as exc:
        return ("fault", exc.kind, exc.code, exc.message, fed.killed)
    finally:
        exchange.batch_results = saved
    return [
        ("error", r.code, r.message) if isinstance(r, ImplementationError) else ("ok", r)
        for r in got
    ]


def _same(lines: Sequence[Line], calls: int, chunk: int = 64) -> Any:
    general = _outcome(lines, calls, chunk, one_pass=False)
    assert _outcome(lines, calls, chunk, one_pass=True) == general
    return general


def _result(id_: object, value: object = "dsh-session:ImEi") -> bytes:
    return wire.encode({"id": id_, "result": value}).rstrip(b"\n")


GOOD = [_result(i) for i in range(1, 201)]


@pytest.mark.parametrize("chunk", [1, 7, 64, 200])
def test_plain_results_read_alike_in_any_chunking(chunk: int) -> None:
    assert _same(GOOD, 200, chunk) == [("ok", "dsh-session:ImEi")] * 200


def _replace(index: int, line: Line) -> list[Line]:
    lines: list[Line] = list(GOOD)
    lines[index] = line
    return lines


SPOILED: list[tuple[str, Line, str | None]] = [
    # (what, the line at index 50 (id 51), the fault's code or None for an answer)
    ("a reply to a later request", _result(52), wire.REPLY_OUT_OF_ORDER),
    ("a reply to no request in flight", _result(5000), wire.REPLY_WRONG_ID),
    ("a string id", _result("51"), wire.REPLY_WRONG_ID),
    ("true for an id", _result(True), wire.REPLY_WRONG_ID),
    ("a float id equal to the awaited one", b'{"id":51.0,"result":"x"}', None),
    ("garbage", b"not json", ""),
    ("two replies on one line", _result(51) + b"," + _result(52), ""),
    ("an array", b"[1,2]", ""),
    ("a typed error", b'{"id":51,"error":{"code":"DSH_X","message":"no\\u001b[31m"}}', None),
    # error replies, read in the one pass too (D-504)
    (
        "a typed error with extra keys",
        b'{"id":51,"error":{"code":"X","message":"m","at":[1]},"x":2}',
        None,
    ),
    (
        "an error with a float beside it",
        b'{"id":51,"error":{"code":"X","message":"m","at":1.5}}',
        None,
    ),
    (
        "an error with a big integer",
        b'{"id":51,"error":{"code":"X","message":"m"},"n":123456789012345678901}',
        None,
    ),
    (
        "an error message with a lone surrogate",
        b'{"id":51,"error":{"code":"X","message":"\\ud800"}}',
        None,
    ),
    (
        "an error message with an escaped pair",
        b'{"id":51,"error":{"code":"X","message":"\\ud83d\\ude00\\u202e"}}',
        None,
    ),
    ("an error with a number code", b'{"id":51,"error":{"code":7,"message":"m"}}', ""),
    ("an error without a message", b'{"id":51,"error":{"code":"X"}}', ""),
    ("an error that is null", b'{"id":51,"error":null}', ""),
    ("an error that is a list", b'{"id":51,"error":["X","m"]}', ""),
    (
        "an error and a null result",
        b'{"id":51,"error":{"code":"X","message":"m"},"result":null}',
        "",
    ),
    (
        "an error to a later request",
        b'{"id":52,"error":{"code":"X","message":"m"}}',
        wire.REPLY_OUT_OF_ORDER,
    ),
    (
        "an error with a duplicate code",
        b'{"id":51,"error":{"code":1,"message":"m","code":"X"}}',
        None,
    ),
    ("result and error", b'{"id":51,"result":1,"error":{"code":"X","message":"m"}}', ""),
    ("neither", b'{"id":51}', ""),
    ("a malformed error", b'{"id":51,"error":"boom"}', ""),
    ("an integer beyond 64 bits", _result(51, 2**70), None),
    ("an infinite result", b'{"id":51,"result":1e400}', None),
    ("a float result", b'{"id":51,"result":[1.5,-0.0]}', None),
    ("a lone surrogate", b'{"id":51,"result":"\\ud800"}', None),
    ("an escaped pair", b'{"id":51,"result":"\\ud83d\\ude00"}', None),
    ("an extra key", b'{"id":51,"result":"x","note":123456789012345678901}', None),
    ("a duplicate id key", b'{"id":50,"result":"x","id":51}', None),
    ("end of output", transport._EOF, ""),
    ("an over-long line", ("oversized", b"99999999"), ""),
]


@pytest.mark.parametrize(("what", "line", "code"), SPOILED, ids=[s[0] for s in SPOILED])
def test_a_spoiled_reply_in_a_run_gets_the_general_readings_outcome(
    what: str, line: Line, code: str | None
) -> None:
    outcome = _same(_replace(50, line), 200)
    if code is None:
        assert isinstance(outcome, list)
        assert len(outcome) == 200
    else:
        assert outcome[0] == "fault", outcome
        if outcome[1] != "crash":
            assert outcome[4], "a protocol fault ends the process"
        if code:
            assert outcome[2] == code


def test_a_wrong_id_is_a_run_problem_that_names_both_requests() -> None:
    fault = _same(_replace(50, _result(52)), 200)
    assert fault[:3] == ("fault", "protocol", wire.REPLY_OUT_OF_ORDER)
    assert "request 52" in fault[3]
    assert "request 51" in fault[3]


def test_a_missing_reply_is_the_general_readings_fault() -> None:
    assert _same(GOOD[:150], 200)[:2] == ("fault", "crash")


def test_an_extra_reply_stays_for_the_next_exchange_check() -> None:
    adapter = transport.SubprocessAdapter(["unused"])
    fed = _Fed([*GOOD[:10], _result(11)], 64)
    adapter._process = fed  # type: ignore[assignment]
    assert len(adapter.call_many([("uri.encode", {"sessionId": "a"})] * 10)) == 10
    assert list(fed.lines) == [_result(11)]


variants = st.sampled_from([line for _, line, _ in SPOILED])


@given(st.lists(st.tuples(st.integers(0, 39), variants), max_size=4), st.integers(1, 50))
@example([(0, b"[]")], 40)
@example([(39, _result(41))], 40)
def test_any_spoiled_run_reads_alike(spoils: list[tuple[int, Line]], chunk: int) -> None:
    lines: list[Line] = list(GOOD[:40])
    for index, line in spoils:
        lines[index] = line
    _same(lines, 40, chunk)


@pytest.mark.parametrize(
    ("lines", "ids"),
    [
        ([_result(1), _result(2)], [1, 2]),
        ([_result(1), _result(3)], [1, 2]),
        ([_result(True)], [1]),
        ([b'{"id":1.0,"result":"x"}'], [1]),
        ([b'{"id":1,"result":1.5}'], [1]),
        ([b"[1]"], [1]),
        ([transport._EOF], [1]),
    ],
)
def test_results_accepts_only_results_of_the_ids_awaited(lines: list[Line], ids: list[int]) -> None:
    got = batch.results(lines, ids)
    # Without the accelerator nothing proves orjson's reading exact: the general path reads.
    accepted = lines == [_result(1), _result(2)] and jsstr._FAST is not None
    assert (got is not None) is accepted
    if got is not None:
        exact = [wire.decode(line) for line in lines if isinstance(line, bytes)]
        assert got == [reply["result"] for reply in exact]
        assert [reply["id"] for reply in exact] == ids


ERROR = b'{"id":2,"error":{"code":"DSH_X","message":"no\\u001b[31m"}}'


@pytest.mark.parametrize(
    "lines",
    [
        [ERROR],
        [_result(1), ERROR],
        [ERROR.replace(b'"id":2', b'"id":1'), _result(2)],
        [_result(1), ERROR, _result(3), ERROR.replace(b'"id":2', b'"id":4')],
    ],
)
def test_a_run_with_error_replies_is_read_in_the_one_pass(lines: list[bytes]) -> None:
    """D-504: each error reply is the general reading's ImplementationError, its message
    made printable; each result is the result."""
    ids = [wire.decode(line)["id"] for line in lines]
    got = batch.results(lines, ids)
    if jsstr._FAST is None:
        assert got is None
        return
    assert got is not None
    for line, answer in zip(lines, got, strict=True):
        reply = wire.decode(line)
        if "error" in reply:
            assert isinstance(answer, ImplementationError)
            assert (answer.code, answer.message) == ("DSH_X", "no\\x1b[31m")
        else:
            assert answer == reply["result"]


@given(
    st.lists(
        st.one_of(
            st.builds(lambda v: ("result", v), st.one_of(st.integers(), js_strings(max_size=4))),
            st.builds(lambda c, m: ("error", c, m), js_strings(max_size=4), js_strings(max_size=6)),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(1, 6),
)
def test_runs_of_results_and_errors_read_alike(answers: list[tuple[Any, ...]], chunk: int) -> None:
    lines = [
        _result(i, a[1])
        if a[0] == "result"
        else wire.encode({"id": i, "error": {"code": a[1], "message": a[2]}}).rstrip(b"\n")
        for i, a in enumerate(answers, 1)
    ]
    _same(lines, len(lines), chunk)


def test_results_is_orjsons_reading_only_where_it_is_exact() -> None:
    # orjson reads an integer beyond 64 bits as a float: the general reading keeps it.
    line = b'{"id":1,"result":[123456789012345678901234567890]}'
    assert orjson.loads(line)["result"] != wire.decode(line)["result"]
    assert batch.results([line], [1]) is None
