"""Both ends of the protocol, accelerated and pure, byte for byte.

The transport has no fast path of its own (D-208): what the accelerator still changes on
the wire is how lines are read (``wire.decode`` takes orjson's reading when
``_jsfast.plain`` proves it exact) and written (``wire.encode``/``encode_all`` let orjson
write plain values).  Every request line the served model answers, and every reply line
the harness reads, must give the same bytes and the same outcome with ``jsstr._FAST``
pointed at the extension and at ``None``, including lines the orjson reading must hand
off (lone-surrogate escapes, integers beyond 64 bits, floats, garbage) and replies orjson
must not write (lone surrogates, floats).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters import heap, serve
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance.strategies import js_strings, json_values
from dsh_conformance.model import jsstr

sys.path.insert(0, str(Path(__file__).parent))
from extension_kit import jsstr_path, needs_extension

pytestmark = needs_extension


OPS = ("uri.encode", "uri.decode", "mention.parse", "mention.format", "json.tagSafe", "no.such")


def _replies(lines: list[bytes], fast: bool) -> tuple[list[bytes], bool]:
    """The served model's replies to *lines* (one read) on one path, and whether it runs on."""
    with jsstr_path(fast):
        server = serve.Server(ReferenceAdapter(), stdout=io.BytesIO())
        server.handle_lines(lines)
        return server.pending, server.running


def _same_on_both_paths(lines: list[bytes]) -> list[bytes]:
    accelerated, pure = _replies(lines, True), _replies(lines, False)
    assert accelerated == pure
    return accelerated[0]


ids = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    js_strings(),
    st.booleans(),
    st.none(),
)
args = st.one_of(
    st.fixed_dictionaries({"sessionId": js_strings()}),
    st.fixed_dictionaries({"sessionId": js_strings(), "label": js_strings()}),
    st.fixed_dictionaries({"uri": js_strings()}),
    st.fixed_dictionaries({"text": js_strings()}),
    st.fixed_dictionaries({"value": json_values()}),
    json_values(),
)


def _spellings(message: object) -> list[bytes]:
    """The same message as JSON.stringify, as ASCII-escaped JSON and as orjson writes it."""
    lines = [jsstr.stringify_bytes(message), json.dumps(message).encode()]
    with contextlib.suppress(TypeError):  # orjson refuses a lone surrogate
        lines.append(orjson.dumps(message))
    return lines


@given(ids, st.sampled_from(OPS), args)
@example(1, "uri.encode", {"sessionId": "\ud800"})  # a lone surrogate, in the request and the reply
@example(2**53 + 1, "uri.encode", {"sessionId": "a"})  # JSON.parse rounds it, orjson not
@example(2**70, "uri.encode", {"sessionId": "a"})  # beyond 64 bits
@example(1e21, "uri.encode", {"sessionId": "a"})  # JSON.stringify: 1e+21, orjson: 1e21
@example(-0.0, "uri.encode", {"sessionId": "a"})  # JSON.stringify: 0
@example(True, "uri.encode", {"sessionId": "a"})  # no id: the general path words the error
@example(1, "uri.decode", {"uri": "dsh-session:%"})  # a typed error
@example(1, "json.tagSafe", {"value": {"a": [1.0, 1e21, -0.0]}})  # floats in the reply
def test_both_paths_reply_alike(id_: object, op: str, arguments: object) -> None:
    for line in _spellings({"id": id_, "op": op, "args": arguments}):
        _same_on_both_paths([line])


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"\\ud800"}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"\\ud83d\\ude00"}}',
        b'{"id":9007199254740993,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":123456789012345678901234567890,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"},"id":2}',
        # orjson reads an integer beyond 64 bits as a float; the message words its type
        b'{"id":1,"op":"uri.encode","args":{"sessionId":100000000000000000000000}}',
        b'{"id":1,"op":"uri.decode","args":{"uri":100000000000000000000000}}',
        b'{"id":1,"op":"mention.parse","args":{"text":"@[\\ud800](dsh-session:a)"}}',
        b'{"id":1,"op":"uri.encode","args":[]}',
        b'{"id":1,"op":"handshake","args":{"protocol":"0"}}',
        b'{"id":1,"op":"shutdown"}',
        b"[1,2]",
        b'{"id":1,',
        b"\xff",
        b'{"id":1,"op":"uri.encode","args":{"id":NaN}}',
        # near misses of the spelling JSON.stringify writes
        b'{"id":01,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":-1,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":0,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":999999999999999,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1234567890123456,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1e0,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1.0,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1, "op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1,"op":"uri\\u002eencode","args":{"sessionId":"a"}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}} ',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}}\r',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"},"op":"uri.decode"}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"},"args":{"sessionId":"b"}}',
        b'{"id":1,"op":"uri.encode","args":{"0":1,"sessionId":"a"}}',
        b'{"id":1,"op":"uri.encode","args":{}}',
        b'{"id":1,"op":"uri.encode","args":"x"}',
        b'{"id":1,"op":"","args":{"sessionId":"a"}}',
        b'{"id":1,"op":"handshake","args":{"protocol":2}}',
        b'{"id":1,"op":"shutdown","args":{}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}, "x":1}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}x',
        b'{"id":1,"op":"uri.encode","args"={"sessionId":"a"}}',
        b'{"id":1,"op"="uri.encode","args":{"sessionId":"a"}}',
        b'{"id"=1,"op":"uri.encode","args":{"sessionId":"a"}}',
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}',
    ],
)
def test_lines_orjson_hands_off_get_the_same_answer(line: bytes) -> None:
    assert len(_same_on_both_paths([line])) == 1  # one reply per line, whatever it holds


@given(st.lists(st.tuples(ids, st.sampled_from((*OPS, "shutdown")), args), max_size=6))
def test_a_chunk_of_lines_gets_the_same_replies_up_to_a_shutdown(
    requests: list[tuple[object, str, object]],
) -> None:
    lines = [b"", b"  "] + [
        jsstr.stringify_bytes({"id": id_, "op": op, "args": arguments})
        for id_, op, arguments in requests
    ]
    _same_on_both_paths(lines)


@pytest.mark.parametrize(
    ("result", "spelled"),
    [
        ({"x": 1e21}, b'{"x":1e+21}'),  # orjson writes 1e21
        ({"x": -0.0}, b'{"x":0}'),  # orjson writes -0.0
        ({"x": 2**53 + 1}, b'{"x":9007199254740992}'),  # JSON.stringify rounds
        ({"s": "\udc00"}, b'{"s":"\\udc00"}'),  # orjson refuses
    ],
)
@pytest.mark.parametrize("fast", [True, False], ids=["accelerated", "pure"])
def test_replies_orjson_cannot_write_are_spelled_as_json_stringify_does(
    result: object, spelled: bytes, fast: bool
) -> None:
    """The exact encoder writes them, once per call."""
    calls: list[str] = []

    class Counting(ReferenceAdapter):
        def call(self, op: str, args: dict[str, object]) -> object:
            calls.append(op)
            return result

    with jsstr_path(fast):
        server = serve.Server(Counting(), stdout=io.BytesIO())
        server.handle_lines([b'{"id":7,"op":"any.op","args":{}}'])
    assert calls == ["any.op"]
    assert server.pending == [b'{"id":7,"result":' + spelled + b"}\n"]


class _LineByLine(serve.Server):
    """The same server, answering one line at a time (``handle_line`` overridden)."""

    def handle_line(self, line: bytes) -> None:
        super().handle_line(line)


session_ids = st.one_of(js_strings(), json_values(), st.just(None))


@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(0, 2**53), js_strings(), st.booleans()),
            st.sampled_from(("uri.encode", "uri.encode", "uri.encode", "uri.decode", "reset")),
            st.one_of(st.fixed_dictionaries({"sessionId": session_ids}), json_values()),
        ),
        min_size=1,
        max_size=70,
    )
)
@example([(i, "uri.encode", {"sessionId": f"s{i}"}) for i in range(64)])  # one uniform run
@example([(1, "uri.encode", {"sessionId": "a"}), (2, "uri.encode", {"sessionId": 5})])
@example([(1, "uri.encode", {"sessionId": "a"}), (2, "uri.encode", {})])
@example([(1, "uri.encode", {"sessionId": "a"}), (True, "uri.encode", {"sessionId": "b"})])
def test_a_run_answered_in_one_pass_is_the_line_by_line_answer(
    requests: list[tuple[object, str, object]],
) -> None:
    """serve._answer_all and _answer_run (a run of one pure op over the lot, D-484) give
    the bytes the line-by-line server gives, typed errors included."""
    lines = [
        jsstr.stringify_bytes({"id": id_, "op": op, "args": arguments})
        for id_, op, arguments in requests
    ]
    with jsstr_path(True):
        batched = serve.Server(ReferenceAdapter(), stdout=io.BytesIO())
        batched.handle_lines(lines)
        each = _LineByLine(ReferenceAdapter(), stdout=io.BytesIO())
        each.handle_lines(lines)
    assert batched.pending == each.pending
    assert len(batched.pending) == len(lines)


def test_pure_operations_are_the_stateless_ones_and_none_for_a_subclass() -> None:
    assert set(ReferenceAdapter().pure_operations()) == {
        "uri.encode",
        "uri.decode",
        "mention.format",
        "mention.parse",
        "json.tagSafe",
    }

    class Answering(ReferenceAdapter):
        def call(self, op: str, args: dict[str, object]) -> object:
            return "mine"

    assert Answering().pure_operations() == {}


def test_keep_heap_raises_the_trim_threshold_where_glibc_is() -> None:
    import platform
    import sys

    expected = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert heap.keep_heap() is expected


@given(st.lists(st.tuples(ids, st.sampled_from(OPS), args), max_size=6))
@example([(1, "uri.encode", {"sessionId": "\ud800"}), (2, "uri.encode", {"sessionId": "a"})])
@example([(1, "json.tagSafe", {"value": [1e21, -0.0, 2**53 + 1]})])
def test_the_harness_writes_a_batch_as_wire_encode_does(
    requests: list[tuple[object, str, object]],
) -> None:
    from dsh_conformance.adapters import wire

    batch = [(op, {"id": id_, "op": op, "args": arguments}) for id_, op, arguments in requests]
    messages = [message for _, message in batch]
    with jsstr_path(True):
        fast = wire.encode_all(messages)
    with jsstr_path(False):
        assert fast == wire.encode_all(messages) == [wire.encode(m) for m in messages]


# --- the harness's reply loop ---------------------------------------------------------------

#: Near misses of the reply spelling JSON.stringify writes.
_NEAR_REPLIES: dict[str, bytes] = {
    "spaced": b'{"id": %d, "result": "x"}',
    "trailing-space": b'{"id":%d,"result":"x"} ',
    "two-results": b'{"id":%d,"result":"x","result":"y"}',
    "result-and-error": b'{"id":%d,"result":"x","error":{"code":"E","message":"m"}}',
    "no-value": b'{"id":%d,"result":}',
    "extra-brace": b'{"id":%d,"result":"x"}}',
    "leading-zero": b'{"id":0%d,"result":"x"}',
    "digit-appended": b'{"id":%d0,"result":"x"}',
    "digit-key": b'{"id":%d,"result":{"0":1}}',
    "unclosed": b'{"id":%d,"result":12',
    "no-colon": b'{"id":%d,"result"="x"}',
}


_REPLY_KINDS = st.sampled_from(
    [
        "result",
        "error",
        "wrong-id",
        "bool-id",
        "float-id",
        "extra-key",
        "garbage",
        "lone-surrogate",
        "big-int",
        "no-result",
        "array",
        "oversized",
        *_NEAR_REPLIES,
    ]
)


def _reply_line(kind: str, id_: int, value: object) -> bytes | tuple[str, bytes]:
    from dsh_conformance.adapters import wire

    shapes: dict[str, object] = {
        "result": {"id": id_, "result": value},
        "error": {"id": id_, "error": {"code": "E", "message": "no\x1b[31m"}},
        "wrong-id": {"id": id_ + 1, "result": value},
        "bool-id": {"id": True, "result": value},
        "float-id": {"id": float(id_), "result": value},
        "extra-key": {"id": id_, "result": value, "x": 1},
        "lone-surrogate": {"id": id_, "result": "\udc00"},
        "big-int": {"id": id_, "result": 2**53 + 1},
        "no-result": {"id": id_},
        "array": [id_],
    }
    if kind == "garbage":
        return b"not json"
    if kind == "huge-int":  # an integer literal orjson reads as a float, json exactly
        return b'{"id":%d,"result":[1180591620717411303425]}' % id_
    if kind == "oversized":
        return ("oversized", b"99")
    if kind in _NEAR_REPLIES:
        return _NEAR_REPLIES[kind] % id_
    return wire.encode(shapes[kind]).rstrip(b"\n")  # type: ignore[arg-type]


def _exchange_outcome(lines: list[bytes | tuple[str, bytes]], fast: bool) -> object:
    from collections import deque

    from dsh_conformance.adapters import subprocess as transport
    from dsh_conformance.adapters.contract import AdapterFault, ImplementationError

    class Process:  # what _exchange asks of a process, with the replies already arrived
        def __init__(self) -> None:
            self.lines: deque[bytes | tuple[str, bytes]] = deque(lines)
            self.stderr_chunks = 0

        def drain_stderr(self) -> bool:
            return True

        def send(self, data: bytes) -> None:
            pass

        def kill(self) -> None:
            pass

    adapter = transport.SubprocessAdapter(["unused"], name="fake")
    adapter._check_no_stray_reply = lambda *_: None  # type: ignore[method-assign]
    adapter._process = Process()  # type: ignore[assignment]
    batch = [("op", {"id": id_, "op": "op", "args": {}}) for id_ in range(1, len(lines) + 1)]
    try:
        with jsstr_path(fast):
            out = adapter._exchange(batch, 1.0, results=True)
    except AdapterFault as exc:
        return ("fault", exc.kind, exc.message, exc.code)
    return [
        (r.code, r.message) if isinstance(r, ImplementationError) else ("ok", repr(r)) for r in out
    ]


@pytest.mark.parametrize("kind", sorted(_NEAR_REPLIES))
def test_near_misses_of_the_common_reply_get_the_same_answer(kind: str) -> None:
    lines = [_reply_line(k, id_, "v") for id_, k in enumerate(("result", kind, "result"), 1)]
    assert _exchange_outcome(lines, fast=True) == _exchange_outcome(lines, fast=False)


@given(st.lists(st.tuples(_REPLY_KINDS, json_values()), min_size=1, max_size=8))
@example([("result", 1), ("bool-id", 1)])
@example([("result", [1.5, "\ud83d\ude00"]), ("big-int", None), ("result", {"0": 1})])
@example([("lone-surrogate", None), ("float-id", None), ("extra-key", None)])
@example([("result", None), ("huge-int", None)])
@example([("result", 1.0), ("float-id", 1)])
def test_the_harness_reads_replies_alike_on_both_paths(
    replies: list[tuple[str, object]],
) -> None:
    lines = [_reply_line(kind, id_, value) for id_, (kind, value) in enumerate(replies, 1)]
    assert _exchange_outcome(lines, fast=True) == _exchange_outcome(lines, fast=False)


class _LineByLine(serve.Server):
    """A server that answers line by line (a ``handle_line`` of its own, as the fault
    servers have): the path every reply was written by before replies were encoded
    together (issue 44 item 2)."""

    def handle_line(self, line: bytes) -> None:
        super().handle_line(line)


class _Unwritable(ReferenceAdapter):
    """The reference model, except ``bad.result`` answers what JSON cannot carry."""

    def call(self, op: str, args: dict[str, object]) -> object:
        if op == "bad.result":
            return {"x": {1, 2}}
        return super().call(op, args)


@given(
    st.lists(
        st.tuples(ids, st.sampled_from((*OPS, "shutdown", "handshake", "bad.result")), args),
        max_size=8,
    ),
    st.booleans(),
)
@example([(1, "uri.encode", {"sessionId": "a"}), (2, "bad.result", {})], True)
@example([(1, "bad.result", {}), (2, "shutdown", {}), (3, "uri.encode", {})], False)
def test_replies_encoded_together_are_the_replies_line_by_line(
    requests: list[tuple[object, str, object]], fast: bool
) -> None:
    """Which catches: a batch that drops or reorders a reply, words an error otherwise,
    lets one unwritable result spoil its neighbours' replies, or answers past a shutdown."""
    lines = [b"", b"{"] + [
        jsstr.stringify_bytes({"id": id_, "op": op, "args": arguments})
        for id_, op, arguments in requests
    ]
    answers = []
    for cls in (serve.Server, _LineByLine):
        with jsstr_path(fast):
            server = cls(_Unwritable(), stdout=io.BytesIO())
            server.handle_lines(lines)
            answers.append((server.pending, server.running))
    assert answers[0] == answers[1]
