"""A long line spooled to a file and scanned through a window (adapters/line_spool.py)
against the same line parsed whole: for every window size, down to one byte, the large
request's reply is the data path's, byte for byte.

Catches: a string, escape, scalar or run of whitespace cut by the window's edge and read
as something else (a bracket inside a text counted, an event cut short); a window that
grows with every cut instead of with the value it must hold; a spool that drops or
repeats bytes where a read ends; keys, texts and ids whose spelling the scan must carry
through unchanged (lone surrogates as escapes, non-BMP text, array-index keys, which
JavaScript's ``JSON.stringify`` orders first).
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_conformance.adapters import large_request, line_spool, wire
from dsh_conformance.adapters.line_spool import Scan, Spool
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.adapters.serve import Server
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.conformance.strategies_sessions import big_texts, session_cases
from tests.test_stored import _user_log

SETTINGS = settings(
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None
)

#: Texts that a cut in the wrong place reads wrongly.
HOSTILE = ['}]{["', '\\"}', "\\", '"', "\ud800]", "\udfff\ud800", "😀界", "\\u0041", "  \t"]


@contextmanager
def _block(size: int) -> Iterator[None]:
    saved = line_spool.BLOCK
    line_spool.BLOCK = size
    try:
        yield
    finally:
        line_spool.BLOCK = saved


def _data_path(line: bytes) -> bytes:
    server = Server(ReferenceAdapter(), stdout=io.BytesIO())
    server.handle_lines([line])
    return b"".join(server.pending)


def _streamed(line: bytes, block: int) -> bytes | None:
    with _block(block):
        spool = Spool.of(line)
        try:
            return large_request._answer(
                Server(ReferenceAdapter(), stdout=io.BytesIO()), Server, spool
            )
        finally:
            spool.close()


def _request(sessions: Any, references: list[str], **extra: Any) -> bytes:
    args = {
        "target": {"id": "target"},
        "content": [{"type": "text", "text": "what did @src decide?"}],
        "references": [{"sessionId": sid} for sid in references],
        "sessions": sessions,
        **extra,
    }
    return wire.encode(wire.request(3, "prepare", args))[:-1]


@SETTINGS
@given(
    case=session_cases(texts=st.one_of(js_strings(max_size=16), big_texts(8))),
    block=st.integers(1, 96),
    sid=st.sampled_from(["src", "0", "10", "2", "😀", "\ud800"]),
    ignored=st.dictionaries(st.sampled_from(["1", "0", "x", "\udfff"]), js_strings(8)),
)
def test_every_window_size_reads_what_the_whole_line_reads(
    case: Any, block: int, sid: str, ignored: dict[str, str]
) -> None:
    session = {**case.session, "header": {**case.session["header"], "id": sid}}
    sessions = {sid: session, "1": {**session, "0": ignored}}
    line = _request(sessions, [sid, "1"], **{"4": ignored})
    streamed = _streamed(line, block)
    assert streamed is not None  # the large path took it
    assert streamed == _data_path(line)


def test_texts_that_look_like_json_survive_every_cut() -> None:
    events = _user_log(HOSTILE * 3)["events"]
    line = _request({"src": {"header": {"id": "src"}, "events": events}}, ["src"])
    assert b"\\ud800" in line  # a lone surrogate travels as an escape
    expected = _data_path(line)
    for block in (1, 2, 3, 5, 7, 64, 1 << 18):
        assert _streamed(line, block) == expected, block


class _Widths(Scan):
    """A scan that records the width of every window it loads."""

    widths: list[int]

    def _load(self, pos: int, need: int = 0) -> None:
        super()._load(pos, need)
        self.widths.append(len(self.window))


def test_the_window_grows_with_the_value_it_must_hold_not_with_each_cut() -> None:
    """Many events, each longer than the window: the window holds about one at a time."""
    events = _user_log(["界" * 400] * 40)["events"]
    line = _request({"src": {"header": {"id": "src"}, "events": events}}, ["src"])
    with _block(64):
        spool = Spool.of(line)
        scan = _Widths(spool)
        scan.widths = []
        spans, end = scan.elements(line.index(b'"events":[') + len(b'"events":'))
        spool.close()
    assert len(spans) == 2 * len(events)
    assert line[end - 1 : end] == b"]"
    longest = max(spans[i + 1] - spans[i] for i in range(0, len(spans), 2))
    assert max(scan.widths) <= 4 * longest < len(line) // 4


def test_receive_reads_to_the_newline_and_returns_what_follows() -> None:
    read, write = os.pipe()
    body = bytes(range(256)).replace(b"\n", b"") * 40
    os.write(write, body[100:] + b"\nnext request\npartial")
    os.close(write)
    with _block(8):
        spool, rest = Spool.receive(read, body[:100])
    os.close(read)
    try:
        assert spool.size == len(body)
        assert spool.whole() == body
        assert spool.read(5, 2000) == body[5:2000]
    finally:
        spool.close()
    # the rest of the read that held the newline, for the serve loop to answer
    assert rest
    assert b"next request\npartial".startswith(rest)


def test_receive_ends_a_line_at_end_of_input() -> None:
    read, write = os.pipe()
    os.write(write, b"tail without a newline")
    os.close(write)
    spool, rest = Spool.receive(read, b"head ")
    os.close(read)
    try:
        assert (spool.whole(), rest) == (b"head tail without a newline", b"")
    finally:
        spool.close()
