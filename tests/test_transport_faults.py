"""Faults of the stdio transport, both ends (issue 26 findings 3-4, issue 23 items 6-7).

A line nested deeper than a parser can follow, a last request without its newline, a
stderr line before a hang and replies out of request order: each has one outcome, the
same on every run and on both the accelerated and the pure path.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
from dsh_conformance.adapters.subprocess import SubprocessAdapter, _Process
from dsh_conformance.guard import FaultGuard

SERVE = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
DEEP = 100_000


def fake(*faults: str, state: Path | None = None) -> list[str]:
    argv = [sys.executable, "-m", "dsh_conformance.adapters.fake"]
    for fault in faults:
        argv += ["--fault", fault]
    return argv + (["--state", str(state)] if state else [])


def serve(data: bytes, pure: bool) -> list[dict]:  # type: ignore[type-arg]
    """The served model's replies to *data* on stdin, on one path."""
    env = dict(os.environ, DSH_CONFORMANCE_PURE="1" if pure else "0")
    done = subprocess.run(SERVE, input=data, capture_output=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return [orjson.loads(line) for line in done.stdout.splitlines()]


def deep_request(id_: int) -> bytes:
    args = b"[" * DEEP + b"]" * DEEP
    return b'{"id":%d,"op":"uri.encode","args":%s}' % (id_, args)


# --- finding 3: deep nesting ----------------------------------------------------------------


@pytest.mark.parametrize("pure", [False, True], ids=["accelerated", "pure"])
def test_a_deeply_nested_request_is_refused_and_the_model_keeps_serving(pure: bool) -> None:
    after = b'{"id":2,"op":"uri.encode","args":{"sessionId":"a"}}\n'
    replies = serve(deep_request(1) + b"\n" + after, pure)
    assert len(replies) == 2, replies
    assert replies[0]["id"] is None
    assert replies[0]["error"]["code"] == "DSH_INVALID_REQUEST"
    assert "nested too deeply" in replies[0]["error"]["message"]
    assert replies[1] == {"id": 2, "result": "dsh-session:ImEi"}


def test_a_deeply_nested_line_is_a_protocol_fault_in_the_harness() -> None:
    with pytest.raises(AdapterFault) as caught:
        wire.decode(b'{"id":1,"result":' + b"[" * DEEP + b"]" * DEEP + b"}")
    assert caught.value.kind == "protocol"
    assert caught.value.code == wire.LINE_TOO_DEEP


def test_a_deeply_nested_reply_is_a_protocol_fault_not_a_recursion_error(tmp_path: Path) -> None:
    adapter = SubprocessAdapter(fake("deep@1", state=tmp_path / "state.json"), timeout=30)
    try:
        with pytest.raises(AdapterFault) as caught:
            adapter.call("uri.encode", {"sessionId": "a"})
        assert caught.value.kind == "protocol"
        assert caught.value.code == wire.LINE_TOO_DEEP
        # the process was dropped; the next call starts a fresh one and is answered
        assert adapter.call("uri.encode", {"sessionId": "a"}) == "dsh-session:ImEi"
    finally:
        adapter.close()


# --- finding 4: the last request line without a newline -------------------------------------


@pytest.mark.parametrize("pure", [False, True], ids=["accelerated", "pure"])
def test_a_final_request_without_newline_is_answered(pure: bool) -> None:
    data = (
        b'{"id":1,"op":"uri.encode","args":{"sessionId":"a"}}\n'
        b'{"id":2,"op":"uri.encode","args":{"sessionId":"b"}}'
    )
    replies = serve(data, pure)
    assert replies == [
        {"id": 1, "result": "dsh-session:ImEi"},
        {"id": 2, "result": "dsh-session:ImIi"},
    ]


def test_a_lone_request_without_newline_is_answered() -> None:
    assert serve(b'{"id":7,"op":"uri.encode","args":{"sessionId":"a"}}', pure=False) == [
        {"id": 7, "result": "dsh-session:ImEi"}
    ]


# --- issue 23 item 6: one fault, one classification -----------------------------------------


_READ_STDERR = _Process._read_stderr


def _late_drain(self: _Process, *args: object) -> None:
    time.sleep(0.25)  # a drain thread the scheduler runs late
    _READ_STDERR(self, *args)


def _no_drain(self: _Process, *args: object) -> None:
    self._stop.wait()  # a drain thread that never gets to run before the deadline


@pytest.mark.parametrize(
    ("faults", "kind"),
    [
        (("stderr-silence",), "crash"),  # the stderr line written while the call waited
        (("flood-stderr=200@1", "hang@2"), "timeout"),  # stderr of an earlier, answered call
    ],
    ids=["stderr-then-hang", "stderr-earlier-then-hang"],
)
def test_one_fault_gets_one_classification_on_every_run(
    monkeypatch: pytest.MonkeyPatch, faults: tuple[str, ...], kind: str
) -> None:
    """The same fault over fresh processes: one classification every time (D-205),
    however late the stderr drain thread gets its turn (here: on time, late, never)."""
    seen = []
    for drain in (_READ_STDERR, _READ_STDERR, _late_drain, _no_drain):
        monkeypatch.setattr(_Process, "_read_stderr", drain)
        adapter = SubprocessAdapter(fake(*faults), timeout=0.4)
        try:
            if len(faults) > 1:
                adapter.call("uri.encode", {"sessionId": "first"})
            with pytest.raises(AdapterFault) as caught:
                adapter.call("uri.encode", {"sessionId": "a"})
            seen.append(caught.value.kind)
        finally:
            adapter.close()
    assert seen == [kind] * len(seen)


# --- issue 23 item 7: out-of-order replies --------------------------------------------------


CALLS = [("uri.encode", {"sessionId": s}) for s in ("a", "b", "c")]


def test_a_reordering_adapter_passes_lock_step_but_fails_pipelined() -> None:
    adapter = SubprocessAdapter(fake("reorder"), timeout=30)
    try:
        assert adapter.call("uri.encode", {"sessionId": "a"}) == "dsh-session:ImEi"
        with pytest.raises(AdapterFault) as caught:
            adapter.call_many(CALLS)
        assert caught.value.kind == "protocol"
        assert caught.value.code == wire.REPLY_OUT_OF_ORDER
        assert "out-of-order reply" in caught.value.message
    finally:
        adapter.close()


def test_a_reply_to_no_request_in_flight_has_its_own_code() -> None:
    adapter = SubprocessAdapter(fake("wrong-id"), timeout=30)
    try:
        with pytest.raises(AdapterFault) as caught:
            adapter.call_many(CALLS)
        assert caught.value.code == wire.REPLY_WRONG_ID
    finally:
        adapter.close()


def test_the_guard_keeps_the_code_of_the_first_fault() -> None:
    guard = FaultGuard(SubprocessAdapter(fake("reorder"), timeout=30))
    try:
        with pytest.raises(AdapterFault):
            guard.call_many(CALLS)
        with pytest.raises(AdapterFault) as again:
            guard.call("uri.encode", {"sessionId": "a"})
        assert again.value.code == wire.REPLY_OUT_OF_ORDER
    finally:
        guard.close()


def test_implementation_call_many_pipelines_and_keeps_typed_errors() -> None:
    impl = Implementation(FaultGuard(SubprocessAdapter(SERVE, timeout=30)))
    try:
        out = impl.call_many([*CALLS, ("uri.decode", {"uri": "nope"})])
        assert out[:3] == ["dsh-session:ImEi", "dsh-session:ImIi", "dsh-session:ImMi"]
        assert isinstance(out[3], ImplementationError)
    finally:
        impl.close()


def test_multi_step_cases_are_pipelined() -> None:
    """A run's multi-step cases send their steps together: against the reordering fake
    the case is a protocol fault; against the served model it passes."""
    from dsh_conformance.conformance import test_cases

    (case,) = [
        p.values[0] for p in test_cases.load_cases() if len(p.values[0].get("steps", ())) > 2
    ][:1]
    for argv, fails in ((fake("reorder"), True), (SERVE, False)):
        impl = Implementation(FaultGuard(SubprocessAdapter(argv, timeout=30)))
        try:
            if fails:
                with pytest.raises(AdapterFault) as caught:
                    test_cases.test_case(impl, case)
                assert caught.value.code == wire.REPLY_OUT_OF_ORDER
            else:
                test_cases.test_case(impl, case)
        finally:
            impl.close()


def test_smoke_pipelines_and_catches_a_reordering_adapter() -> None:
    from dsh_conformance.smoke import smoke_checks

    name = "subprocess:" + " ".join(fake("reorder"))
    (check,) = [c for c in smoke_checks(name, timeout=30) if c.name == "pipelining"]
    assert check.status == "fail"
    assert "DSH_REPLY_OUT_OF_ORDER" in check.detail
    served = "subprocess:" + " ".join(SERVE)
    (check,) = [c for c in smoke_checks(served, timeout=30) if c.name == "pipelining"]
    assert check.status == "ok"


def test_a_process_that_floods_stderr_forever_still_times_out() -> None:
    """The transport's own stderr drain is bounded: an endless flood cannot hold it."""
    flood = "import sys\nwhile True:\n    sys.stderr.write('x' * 65536)\n"
    adapter = SubprocessAdapter([sys.executable, "-c", flood], timeout=0.5, startup_timeout=1.0)
    started = time.monotonic()
    try:
        with pytest.raises(AdapterFault) as caught:
            adapter.handshake()
        assert caught.value.kind == "crash"  # it wrote to stderr, then never answered
        assert time.monotonic() - started < 15
    finally:
        adapter.close()
