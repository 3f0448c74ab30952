"""The subprocess transport and the wire format, driven directly (no pytest-in-pytest)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
from dsh_conformance.adapters.registry import resolve
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.model.errors import DshError

SERVE = [sys.executable, "-m", "dsh_conformance.adapters.serve"]


def fake(*faults: str, state: Path | None = None) -> list[str]:
    argv = [sys.executable, "-m", "dsh_conformance.adapters.fake"]
    for fault in faults:
        argv += ["--fault", fault]
    return argv + (["--state", str(state)] if state else [])


@pytest.fixture
def served() -> Iterator[SubprocessAdapter]:
    adapter = SubprocessAdapter(SERVE, validate=True, timeout=10)
    yield adapter
    adapter.close()


# --- wire -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "a", "\ud800", "\udfff\ud800", "😀", "\u2028<\x00"])
def test_lines_carry_every_js_string(text: str) -> None:
    line = wire.encode(wire.result(1, {text: [text]}))
    assert line.endswith(b"\n")
    assert b"\n" not in line[:-1]
    line.decode("utf-8")  # always valid UTF-8: lone surrogates travel as escapes
    assert wire.decode(line.rstrip(b"\n")) == {"id": 1, "result": {text: [text]}}


def test_escaped_surrogate_pairs_are_canonicalized() -> None:
    assert wire.decode(b'{"id":1,"result":"\\ud83d\\ude00"}')["result"] == "😀"


@pytest.mark.parametrize("raw", [b"not json", b"[1]", b'{"a":NaN}', b"\xff\xfe", b""])
def test_garbage_is_a_fault_not_an_exception(raw: bytes) -> None:
    with pytest.raises(AdapterFault) as caught:
        wire.decode(raw)
    assert caught.value.kind == "garbage"


@pytest.mark.parametrize(
    ("kind", "message", "valid"),
    [
        ("request", {"id": 1, "op": "uri.encode", "args": {}}, True),
        ("request", {"id": True, "op": "x", "args": {}}, False),
        ("request", {"id": 1, "op": "x"}, False),
        ("reply", {"id": "a", "result": None}, True),
        ("reply", {"id": "a", "error": {"code": "DSH_X", "message": "m"}}, True),
        ("reply", {"id": "a", "error": {"code": "lower", "message": "m"}}, False),
        ("reply", {"id": "a", "result": 1, "error": {"code": "X", "message": ""}}, False),
        ("handshake-request", wire.handshake_request(), True),
        (
            "handshake-response",
            {
                "id": 0,
                "result": {
                    "protocol": 1,
                    "capabilities": ["uri"],
                    "implementation": {"name": "n", "language": "l"},
                },
            },
            True,
        ),
        (
            "handshake-response",
            {
                "id": 0,
                "result": {
                    "protocol": 99,
                    "capabilities": [],
                    "implementation": {"name": "n", "language": "l"},
                },
            },
            False,
        ),
    ],
)
def test_protocol_schema(kind: str, message: dict, valid: bool) -> None:  # type: ignore[type-arg]
    assert (not wire.problems(kind, message)) is valid


def test_printable_spells_out_controls_and_bidi() -> None:
    text = wire.printable("a\x1b[31m\x9b\u202e\x07\tb\nc")
    assert text == "a\\x1b[31m\\x9b\\u202e\\x07\tb\nc"
    assert wire.printable("\n\t", keep_newlines=False) == "\\n\\t"


# --- the transport --------------------------------------------------------------------------


def test_handshake_calls_typed_errors_and_surrogates(served: SubprocessAdapter) -> None:
    handshake = served.handshake()
    assert handshake.protocol == 2
    assert handshake.implementation.language == "python"
    assert {"uri", "mention", "serialization"} <= handshake.capabilities
    sid = "lone \ud800 and pair 😀"
    uri = served.call("uri.encode", {"sessionId": sid})
    assert served.call("uri.decode", {"uri": uri}) == sid
    with pytest.raises(ImplementationError) as caught:
        served.call("no.such.op", {})
    assert caught.value.code == "DSH_UNSUPPORTED_OPERATION"
    assert served.call("reset", {}) is None


def test_pipelining_keeps_order_and_returns_typed_errors(served: SubprocessAdapter) -> None:
    calls = [("uri.encode", {"sessionId": str(i)}) for i in range(500)]
    calls.insert(250, ("uri.decode", {"uri": "nope"}))
    replies = served.call_many(calls)
    assert len(replies) == 501
    assert isinstance(replies[250], ImplementationError)
    assert replies[0] == served.call("uri.encode", {"sessionId": "0"})
    assert replies[500] == served.call("uri.encode", {"sessionId": "499"})


def test_close_ends_the_process(served: SubprocessAdapter) -> None:
    served.handshake()
    process = served._process
    assert process is not None
    served.close()
    assert process.popen.poll() == 0  # shutdown answered, then a clean exit


def test_a_crash_restarts_with_handshake_replay(tmp_path: Path) -> None:
    adapter = SubprocessAdapter(fake("crash@2", state=tmp_path / "s"), timeout=10)
    try:
        first = adapter.handshake()
        pid = adapter.pid
        adapter.call("uri.encode", {"sessionId": "a"})
        with pytest.raises(AdapterFault) as caught:
            adapter.call("uri.encode", {"sessionId": "b"})
        assert caught.value.kind == "crash"
        assert "exited with status 3" in caught.value.message
        assert "fatal crash" in caught.value.message  # the stderr tail
        assert adapter.call("uri.encode", {"sessionId": "c"}).startswith("dsh-session:")
        assert adapter.pid != pid
        assert adapter.restarts == 1
        assert adapter.handshake() == first
    finally:
        adapter.close()


@pytest.mark.parametrize(
    ("fault", "kind", "words", "timeout"),
    [
        ("hang", "timeout", "within the 0.5s per-call timeout", 0.5),
        # Told apart from a hang by stderr arriving within the wait: the wait is long
        # enough that a loaded machine cannot delay the fake's one line past it.
        ("stderr-silence", "crash", "went silent", 3.0),
        ("garbage", "garbage", "not JSON", 30.0),
        ("wrong-id", "protocol", "does not match request id", 30.0),
        ("oversized=5000", "protocol", "over the 1000-byte reply cap", 30.0),
        ("endless=5000", "protocol", "line too long", 30.0),
    ],
)
def test_faults_are_typed(fault: str, kind: str, words: str, timeout: float) -> None:
    adapter = SubprocessAdapter(fake(fault), timeout=timeout, max_reply_bytes=1000)
    try:
        with pytest.raises(AdapterFault) as caught:
            adapter.call("uri.encode", {"sessionId": "a"})
        assert caught.value.kind == kind
        assert words in caught.value.message
        assert "\x1b" not in caught.value.message
    finally:
        adapter.close()


def test_the_restart_budget_ends_a_crash_loop() -> None:
    adapter = SubprocessAdapter(fake("crash"), timeout=5, restart_budget=2)
    try:
        kinds = []
        for _ in range(5):
            with pytest.raises(AdapterFault) as caught:
                adapter.call("uri.encode", {"sessionId": "a"})
            kinds.append(caught.value.message)
        assert adapter.restarts == 2
        assert "restart budget exhausted" in kinds[-1]
    finally:
        adapter.close()


def test_protocol_mismatch_and_missing_program() -> None:
    with pytest.raises(AdapterFault, match="protocol mismatch"):
        SubprocessAdapter(fake("bad-protocol"), timeout=5).handshake()
    with pytest.raises(AdapterFault, match="cannot start"):
        SubprocessAdapter(["/nonexistent/implementation"]).handshake()


def test_validate_mode_rejects_invalid_requests(served: SubprocessAdapter) -> None:
    with pytest.raises(AdapterFault, match="invalid request"):
        served.call("", {})


def test_registry_names() -> None:
    adapter = resolve("subprocess:" + " ".join(SERVE))
    assert isinstance(adapter, SubprocessAdapter)
    assert adapter.argv == SERVE
    with pytest.raises(DshError):
        resolve("subprocess:")


def test_a_duplicate_reply_is_a_protocol_fault_not_the_next_answer() -> None:
    adapter = SubprocessAdapter(fake("duplicate@1"), timeout=5)
    try:
        assert adapter.call("uri.encode", {"sessionId": "a"}).startswith("dsh-session:")
        time.sleep(0.3)  # the second copy arrives
        with pytest.raises(AdapterFault) as caught:
            adapter.call("uri.encode", {"sessionId": "b"})
        assert caught.value.kind == "protocol"
        assert "exactly one reply" in caught.value.message
    finally:
        adapter.close()


def test_an_endless_line_is_reported_at_the_cap_not_at_the_timeout() -> None:
    adapter = SubprocessAdapter(fake("endless"), timeout=30, max_reply_bytes=100_000)
    try:
        started = time.monotonic()
        with pytest.raises(AdapterFault, match="line too long") as caught:
            adapter.call("uri.encode", {"sessionId": "a"})
        assert "100000-byte reply cap" in caught.value.message
        assert time.monotonic() - started < 10  # long before the 30 s timeout
    finally:
        adapter.close()
