"""The harness against every fault of the self-test kit: the run completes, the fault is
classified, and no result is lost (decisions D-121..D-123)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from dsh_conformance.record import load_record

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, complete, fake, outcomes, run_argv, run_record

#: A small, fast slice of the suite: the URI requirements.
SLICE = ("--requirement", "URI-*")
#: The same with the ``quick`` profile: a fault at the Nth call is the same fault with ten
#: examples a test as with sixty, at a sixth of the calls (CI time, issue 23).
QUICK_SLICE = (*SLICE, "--hypothesis-profile", "quick")
ESC = "\x1b"


def victims(record, outcome: str) -> list:  # type: ignore[no-untyped-def]
    return [t for t in record.tests if t.outcome == outcome]


@pytest.mark.parametrize(
    ("fault", "outcome", "words", "timeout"),
    [
        ("hang@5", "timeout", "within the 1s per-call timeout", "1"),
        # Told apart from a hang by stderr arriving within the wait, which is long enough
        # that a loaded machine cannot delay the fake's one line past it.
        ("stderr-silence@5", "crash", "wrote to stderr and then went silent", "3"),
        ("crash@5", "crash", "exited with status 3", "30"),
        ("garbage@5", "crash", "not JSON", "30"),
        ("wrong-id@5", "crash", "does not match request id", "30"),
        ("oversized=300000@5", "crash", "over the 100000-byte reply cap", "30"),
        ("endless=300000@5", "crash", "line too long", "30"),
        ("duplicate@5", "crash", "a duplicate or extra reply", "30"),
        ("error=DSH_SCRIPTED:uri.encode@1", "error", "DSH_SCRIPTED", "30"),
    ],
)
def test_a_fault_costs_exactly_one_test(
    tmp_path: Path, fault: str, outcome: str, words: str, timeout: str
) -> None:
    done, record = run_record(
        tmp_path,
        fake(fault, state=tmp_path / "state.json"),
        *QUICK_SLICE,
        "--timeout",
        timeout,
        "--handshake-timeout",  # --timeout bounds the handshake too (D-311): room to start
        "60",
        env={"DSH_ADAPTER_MAX_REPLY_BYTES": "100000"},
    )
    complete(record)
    counts = outcomes(record)
    assert counts.get(outcome) == 1, counts
    assert counts.get("pass") == len(record.tests) - 1, counts
    (victim,) = victims(record, outcome)
    assert words in victim.message
    assert ESC not in victim.message
    assert ESC not in victim.longrepr
    assert done.returncode == 1, done.stderr
    expected_restarts = 0 if outcome == "error" else 1
    assert record.footer is not None
    assert record.footer["restarts"] == expected_restarts


def test_stderr_floods_do_not_block(tmp_path: Path) -> None:
    done, record = run_record(
        tmp_path, fake("flood-stderr=3000000@3", "flood-stderr=100000@10+"), *QUICK_SLICE
    )
    complete(record)
    assert outcomes(record) == {"pass": len(record.tests)}
    assert done.returncode == 0, done.stderr


def test_escape_sequences_never_reach_the_terminal_or_reports(tmp_path: Path) -> None:
    done, record = run_record(
        tmp_path,
        fake("ansi:uri.encode@1", "garbage@9", state=tmp_path / "s.json"),
        *QUICK_SLICE,
        "--timeout",
        "5",
        "--handshake-timeout",
        "60",
    )
    complete(record)
    assert outcomes(record).get("error") == 1
    assert outcomes(record).get("crash") == 1
    out = tmp_path / "out"
    for text in (done.stdout, done.stderr, *(p.read_text() for p in out.iterdir())):
        assert ESC not in text
        assert "\x9b" not in text
        assert "\x07" not in text
    assert "\\x1b[2J" in done.stdout  # shown, spelled out
    assert "[bold red]markup[/bold red]" in done.stdout  # printed literally, not as markup


def test_a_crash_loop_exhausts_the_restart_budget_and_still_records_everything(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    done, record = run_record(
        tmp_path, fake("crash@2+"), *QUICK_SLICE, env={"DSH_ADAPTER_RESTART_BUDGET": "3"}
    )
    complete(record)
    assert outcomes(record) == {"crash": len(record.tests)} or set(outcomes(record)) <= {
        "crash",
        "pass",
    }
    assert record.footer is not None
    assert record.footer["restarts"] == 3
    assert any("restart budget exhausted" in t.message for t in record.tests)
    assert done.returncode == 1
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("fault", ["bad-protocol", "crash:handshake"])
def test_a_broken_handshake_aborts_with_a_typed_error(tmp_path: Path, fault: str) -> None:
    out = tmp_path / "out"
    done = cli("run", "--adapter", fake(fault), "--report-dir", str(out), *SLICE)
    assert done.returncode == 70, done.stderr
    assert "adapter-unavailable" in done.stderr
    record = load_record(out / "record.jsonl")
    assert record.tests == ()
    assert record.footer is not None
    assert record.footer["status"] == "aborted"


def test_a_killed_run_keeps_every_finished_result(tmp_path: Path) -> None:
    """The record is flushed per line: kill the harness mid-run, read what it finished."""
    out = tmp_path / "out"
    record_path = out / "record.jsonl"
    argv = run_argv(fake("hang@40"), out, "--timeout", "120", *SLICE)
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if record_path.exists() and len(record_path.read_text().splitlines()) >= 4:
                break
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        process.kill()  # the adapter sees its stdin close and leaves (no orphan)
        process.wait()
    record = load_record(record_path)
    assert record.truncated
    assert len(record.tests) >= 3
    assert all(t.outcome == "pass" for t in record.tests)
    summary = cli("summary", str(record_path))
    assert summary.returncode == 3  # EX_INCOMPLETE
    assert "TRUNCATED" in summary.stdout


@pytest.mark.parametrize(
    ("fault", "outcome", "words"),
    [
        ("crash@5", "crash", ["exited with status 3", "fatal crash on 'uri.encode'"]),
        ("hang@5", "timeout", ["within the 1s per-call timeout"]),
    ],
)
def test_a_fault_inside_a_hypothesis_test_is_named_not_flaky(
    tmp_path: Path, fault: str, outcome: str, words: list[str]
) -> None:
    """Hypothesis replays a failing example; the guard re-raises the fault from another
    line, which Hypothesis reports as FlakyFailure.  The record names the fault."""
    _, record = run_record(
        tmp_path,
        fake(fault, state=tmp_path / "state.json"),
        "-k",
        "test_encode_is_scheme_plus_base64url_of_json_stringify",
        "--timeout",
        "1",
        "--handshake-timeout",  # room for Python to start on a loaded machine (D-311)
        "60",
    )
    (victim,) = record.tests
    assert victim.outcome == outcome
    for word in words:
        assert word in victim.message
        assert word in victim.longrepr
    for wrapper in ("Flaky", "ExceptionGroup"):
        assert wrapper not in victim.message
    # the request in flight is recorded, and named at the head of the message (D-180)
    import json

    request = json.loads(victim.request)
    assert request["op"] == "uri.encode"
    assert isinstance(request["args"]["sessionId"], str)
    assert victim.message.startswith(f"{outcome} (request in flight: {{")
