"""The served model's large ``prepare`` request read from its line's bytes
(adapters/large_request.py, D-491) against the data path (the line parsed whole, then
the reference adapter's ``prepare``): the same reply, byte for byte, for valid sessions
with every kind of string (lone surrogates travel as escapes), for flawed sessions
(their typed errors), and for lines the path must leave to the data path (not JSON,
duplicate keys, faults, odd shapes) -- which it then does not answer at all.

Catches: a span scan that cuts an event at a bracket or quote inside a string; a path
that answers a line the data path rejects as not JSON (garbage in a session nobody
references); a reply that differs in spelling or in error text; a served loop that
loses the request after a long line or the long line at end of input.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters import large_request, wire
from dsh_conformance.adapters.line_spool import Spool
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import LARGE_LINE, Server
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.conformance.strategies_sessions import big_texts, session_cases
from dsh_conformance.model import jsstr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_upstream as inputs

from tests.test_stored import _user_log

SETTINGS = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None
)


def _server() -> Server:
    return Server(ReferenceAdapter(), stdout=io.BytesIO())


def _data_path(line: bytes) -> bytes:
    """The reply the served loop gives a line when it parses it whole."""
    server = _server()
    server.handle_lines([line])
    return b"".join(server.pending)


def _streamed(line: bytes) -> bytes | None:
    spool = Spool.of(line)
    try:
        return large_request._answer(_server(), Server, spool)
    finally:
        spool.close()


def _request(sessions: Any, **extra: Any) -> bytes:
    args = {
        "target": {"id": "target"},
        "content": [{"type": "text", "text": "what did @src decide?"}],
        "references": [{"sessionId": "src"}],
        "sessions": sessions,
        **extra,
    }
    return wire.encode(wire.request(3, "prepare", args))[:-1]


@SETTINGS
@given(
    case=session_cases(texts=st.one_of(js_strings(max_size=16), big_texts())),
    cap=st.none() | st.integers(1, 2000),
    other=st.booleans(),
)
def test_a_valid_request_is_answered_from_its_bytes_as_the_data_path_answers_it(
    case: Any, cap: int | None, other: bool
) -> None:
    sessions = {"src": case.session}
    if other:  # a session nobody references is parsed, never read
        sessions["other"] = case.session
    extra = {} if cap is None else {"config": {"maxReferenceBytes": cap}}
    line = _request(sessions, **extra)
    streamed = _streamed(line)
    assert streamed is not None  # this path took it
    assert streamed == _data_path(line)


_FLAWS = (
    b'"seq":0',  # -> a bool seq: an invalid event, a typed error
    b'"surfaceOp":"append"',  # -> an unknown surfaceOp
    b'"type":"text"',  # -> a block that projects to nothing
)


@SETTINGS
@given(case=session_cases(), flaw=st.sampled_from(_FLAWS), data=st.data())
def test_a_flawed_session_gets_the_data_paths_error(case: Any, flaw: bytes, data: Any) -> None:
    line = _request({"src": case.session})
    if flaw not in line:
        return
    replacement = {
        b'"seq":0': b'"seq":true',
        b'"surfaceOp":"append"': b'"surfaceOp":"prepend"',
        b'"type":"text"': b'"type":"image"',
    }[flaw]
    at = data.draw(st.integers(0, line.count(flaw) - 1))
    parts = line.split(flaw)
    line = flaw.join(parts[: at + 1]) + replacement + flaw.join(parts[at + 1 :])
    assert _streamed(line) == _data_path(line)


#: Lines the path leaves to the data path, and why.
LEFT: dict[str, bytes] = {
    "not JSON inside an unreferenced session": _request(
        {"src": {"header": {"id": "src"}, "events": []}, "x": {"header": {}, "events": []}}
    ).replace(b'"x":{"header":{}', b'"x":{"header":{]'),
    "not JSON inside an event": _request(
        {"src": {"header": {"id": "src"}, "events": [{"type": "x", "seq": 0, "time": 0}]}}
    ).replace(b'"seq":0', b'"seq":0x'),
    "invalid UTF-8 in a text": _request(
        {"src": {"header": {"id": "src"}, "events": [{"type": "t\u00e9"}]}}
    ).replace("\u00e9".encode(), b"\xe9"),
    "a duplicate session": _request({"src": {"header": {"id": "src"}, "events": []}}).replace(
        b'"sessions":{', b'"sessions":{"src":{"header":{"id":"src"},"events":[]},'
    ),
    "faults": _request(
        {"src": {"header": {"id": "src"}, "events": []}}, faults={"src": {"kind": "fail"}}
    ),
    "a session that is not an object": _request({"src": []}),
    "events not an array": _request({"src": {"header": {"id": "src"}, "events": {}}}),
    "no header": _request({"src": {"events": []}}),
    "another op": wire.encode(wire.request(3, "retention.retain", {"snapshot": {}}))[:-1],
    "trailing garbage": _request({"src": {"header": {"id": "src"}, "events": []}}) + b" x",
    "a bool id": _request({}).replace(b'"id":3', b'"id":true'),
}


def test_lines_this_path_does_not_take_are_left_to_the_data_path() -> None:
    for why, line in LEFT.items():
        assert _streamed(line) is None, why
    # and what the data path says of the line that is not JSON:
    reply = jsstr.parse_bytes(_data_path(LEFT["not JSON inside an unreferenced session"]))
    assert isinstance(reply, dict)
    assert reply["error"]["code"] == "DSH_INVALID_REQUEST"


def test_brackets_quotes_and_escapes_inside_texts_do_not_cut_an_event() -> None:
    texts = ['}]{["', '\\"}', "\\", '"', "\ud800]", "\udfff\ud800", "\n\t\x00", "引号"]
    events = _user_log(texts)["events"]  # the stored log's own session of these texts
    line = _request({"src": {"header": {"id": "src"}, "events": events}})
    assert b"\\ud800" in line  # the lone surrogate travels as an escape
    streamed = _streamed(line)
    assert streamed is not None
    assert streamed == _data_path(line)


def test_the_served_loop_answers_a_long_line_and_the_requests_around_it() -> None:
    """One write: a small request, a prepare line over LARGE_LINE, a small request; then a
    second long line that ends with end of input instead of a newline."""
    args = inputs.prepare_args(inputs.session_json(600))
    big = wire.encode(wire.request(2, "prepare", args))
    assert len(big) > LARGE_LINE
    small = [wire.encode(wire.request(i, "uri.encode", {"sessionId": "s"})) for i in (1, 3)]
    last = wire.encode(wire.request(4, "prepare", args))[:-1]
    served = subprocess.run(
        [sys.executable, "-m", "dsh_conformance.adapters.serve"],
        input=small[0] + big + small[1] + last,
        capture_output=True,
        check=True,
        timeout=120,
    )
    replies = served.stdout.splitlines(keepends=True)
    assert replies == [
        _data_path(small[0]),
        _data_path(big[:-1]),
        _data_path(small[1]),
        _data_path(last),
    ]
