"""The fault battery: hangs behind wrappers, in grandchildren and deaf to SIGTERM; the
harness interrupted and killed mid-run.  Every run ends within the timeout plus a small
grace, leaves no process behind, and its record says what happened (D-135, D-136).

Leftovers are found without psutil: every process of a run inherits a marker
environment variable, and /proc is scanned for it.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import TESTS, cli_argv, complete, outcomes, run_args

from dsh_conformance.adapters.procgroup import TERM_GRACE
from dsh_conformance.record import RunRecord, load_record

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/environ").exists(), reason="the leftover scan reads /proc (Linux)"
)

TIMEOUT = 1.0
#: What a run may take beyond the timeout and the TERM grace (a loaded 2-core machine).
SLACK = 8.0
SLICE = ("--requirement", "URI-001", "--seed", "7", "--hypothesis-profile", "quick")


def marked(marker: str) -> list[str]:
    """Command lines of the live processes carrying *marker* in their environment."""
    needle = f"DSH_FAULT_MARKER={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue  # gone, or a zombie
    return found


def assert_nothing_left(marker: str, within: float = TERM_GRACE + SLACK) -> None:
    deadline = time.monotonic() + within
    while marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not marked(marker), marked(marker)


def wrapped(fault: str, state: Path) -> str:
    """The fault kit behind ``sh -c`` (not exec'd: the shell stays the group leader)."""
    fake = [sys.executable, "-m", "dsh_conformance.adapters.fake", "--fault", fault]
    fake += ["--state", str(state)]
    return "subprocess:" + shlex.join(["sh", "-c", shlex.join(fake) + "; exit $?"])


def start(tmp_path: Path, adapter: str, *extra: str) -> tuple[subprocess.Popen[str], str]:
    marker = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(TESTS), "DSH_FAULT_MARKER": marker}
    env["PYTHONFAULTHANDLER"] = "1"  # a hung harness shows its stacks on SIGABRT
    argv = cli_argv(*run_args(adapter, tmp_path / "out", *SLICE, *extra))
    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=default_signals,
    )
    return process, marker


def default_signals() -> None:
    """The harness starts as a terminal's foreground job would: a background shell job
    (``pytest &``) ignores SIGINT, the child inherits that, and the harness rightly keeps
    an ignored signal ignored (signals._ours), so these tests would find no interrupt."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def finish(process: subprocess.Popen[str], timeout: float) -> str:
    """Wait for the harness; if it hangs, fail with the stacks of all its threads."""
    try:
        return process.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        stderr = process.communicate(timeout=30)[1]
        Path("/tmp/hung-stacks.txt").write_text(stderr, encoding="utf-8")
        raise AssertionError(f"the harness hung; its stacks:\n{stderr[-6000:]}") from None


def record_of(tmp_path: Path) -> RunRecord:
    return load_record(tmp_path / "out" / "record.jsonl")


@pytest.mark.parametrize("fault", ["stall@3", "stall-grandchild@3", "stall-ignore-term@3"])
def test_a_hang_behind_a_wrapper_costs_one_timeout(tmp_path: Path, fault: str) -> None:
    process, marker = start(
        tmp_path,
        wrapped(fault, tmp_path / "state.json"),
        "--timeout",
        str(TIMEOUT),
        "--handshake-timeout",  # --timeout bounds the handshake too (D-311): room to start
        "60",
    )
    try:
        stderr = finish(process, 120)
    finally:
        process.kill()
    assert process.returncode == 1, stderr
    record = record_of(tmp_path)
    complete(record)
    assert record.ending == "complete"
    assert outcomes(record).get("timeout") == 1, outcomes(record)
    (victim,) = [t for t in record.tests if t.outcome == "timeout"]
    assert f"within the {TIMEOUT:g}s per-call timeout" in victim.message
    assert victim.duration < TIMEOUT + TERM_GRACE + SLACK
    assert record.footer is not None
    assert record.footer["restarts"] == 1
    assert_nothing_left(marker)


def wait_for_results(tmp_path: Path, process: subprocess.Popen[str], count: int) -> None:
    path = tmp_path / "out" / "record.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if path.exists() and path.read_text(encoding="utf-8").count('"type":"test"') >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"the run never recorded {count} results")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_ends_promptly_and_says_so(tmp_path: Path, signum: int) -> None:
    """Interrupted while the adapter hangs (deaf to SIGTERM, behind sh -c, 60 s timeout)."""
    adapter = wrapped("stall-ignore-term@12", tmp_path / "state.json")
    process, marker = start(tmp_path, adapter, "--timeout", "60")
    try:
        wait_for_results(tmp_path, process, 3)
        time.sleep(0.5)  # into the hang
        process.send_signal(signum)
        sent = time.monotonic()
        stderr = finish(process, 60)
        took = time.monotonic() - sent
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert f"error[interrupted] the run was interrupted by {signal.Signals(signum).name}" in stderr
    # shutdown request (2 s), the group (SIGTERM, grace, SIGKILL), the reports: seconds on
    # a loaded machine, never the 60 s per-call timeout the adapter is stuck in
    assert took < 30, took
    record = record_of(tmp_path)
    assert record.ending == "interrupted"
    assert record.footer is not None
    assert record.footer["signal"] == signal.Signals(signum).name
    assert 3 <= len(record.tests) < record.header["selected"]
    assert "timeout" not in outcomes(record)  # the abandoned test is not recorded
    assert (tmp_path / "out" / "report.md").exists()  # reports of what ran
    from test_harness_honest import assert_reports_say

    assert_reports_say(tmp_path / "out", "interrupted")  # ...that say so at the top
    assert record.footer["exit_status"] == 130  # what the command exited with
    assert_nothing_left(marker)
    from test_harness_cli_errors import invoke

    path = str(tmp_path / "out" / "record.jsonl")
    assert invoke("summary", path)[0] == 3
    assert invoke("diff", path, path)[0] == 3
    assert invoke("summary", path, "--allow-incomplete")[0] == 0


def test_a_killed_harness_leaves_no_process_and_a_truncated_record(tmp_path: Path) -> None:
    adapter = wrapped("stall-ignore-term@12", tmp_path / "state.json")
    process, marker = start(tmp_path, adapter, "--timeout", "60")
    try:
        wait_for_results(tmp_path, process, 3)
        time.sleep(0.5)
        process.kill()  # SIGKILL: no cleanup in the harness; its watchdog ends the group
        process.communicate(timeout=30)
    finally:
        process.kill()
    record = record_of(tmp_path)
    assert record.ending == "truncated"
    assert len(record.tests) >= 3
    assert_nothing_left(marker, within=2 * TERM_GRACE + SLACK)


def stalled(state: Path, call: int) -> None:
    """Wait until the fault kit's counter (its --state file) has reached *call*."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if json.loads(state.read_text(encoding="utf-8"))[0] >= call:
                return
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"the fault kit never reached call {call}")


def test_resume_finishes_an_interrupted_run(tmp_path: Path) -> None:
    """The Ctrl-C hint is the exact command, and running it finishes the run where it
    stands: the same record, complete, and reports beside it that say so (issue 43)."""
    state = tmp_path / "state.json"
    process, _ = start(tmp_path, wrapped("stall@12", state), "--timeout", "60")
    try:
        wait_for_results(tmp_path, process, 3)
        stalled(state, 12)  # interrupted in the stall: it has fired for good
        process.send_signal(signal.SIGINT)
        stderr = finish(process, 60)
    finally:
        process.kill()
    first = record_of(tmp_path)
    assert first.ending == "interrupted"
    record = tmp_path / "out" / "record.jsonl"
    (hint,) = [line for line in stderr.splitlines() if "continue with: " in line]
    command = shlex.split(hint.split("continue with: ", 1)[1])
    assert command == [
        "dsh-conformance", "run", "--resume", str(record), "--timeout", "60", "--fail-on", "all"
    ]  # fmt: skip
    # The state file says the stall already fired: the header's adapter behaves now.
    done = subprocess.run(
        cli_argv(*command[1:]),
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    resumed = record_of(tmp_path)
    complete(resumed)
    assert resumed.ending == "complete"
    assert resumed.footer is not None
    assert resumed.footer["exit_status"] == 0
    assert resumed.header["resumed"] == len(first.tests)
    assert resumed.header["hypothesis"]["seed"] == first.header["hypothesis"]["seed"]
    assert resumed.header["filters"] == first.header["filters"]
    earlier = first.by_nodeid()
    assert all(resumed.by_nodeid()[k] == v for k, v in earlier.items())
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "NOT A PASS" not in report
    assert "interrupted" not in report
    assert json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))["complete"]


def test_last_failed_reruns_only_the_failures(tmp_path: Path) -> None:
    process, _ = start(tmp_path, wrapped("crash@4", tmp_path / "s.json"))
    finish(process, 120)
    first = record_of(tmp_path)
    failed = {t.nodeid for t in first.tests if t.outcome == "crash"}
    assert len(failed) == 1
    rerun_out = tmp_path / "rerun"
    process, _ = start(
        tmp_path,
        "reference",
        "--last-failed",
        str(tmp_path / "out" / "record.jsonl"),
        "--report-dir",
        str(rerun_out),
    )
    finish(process, 120)
    assert process.returncode == 0
    rerun = load_record(rerun_out / "record.jsonl")
    assert {t.nodeid for t in rerun.tests} == failed
    assert rerun.header["rerun_failed"] is True
