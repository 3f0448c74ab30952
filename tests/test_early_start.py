"""A ``subprocess:`` implementation starts while the harness gets ready (D-537).

``SubprocessAdapter.launch`` spawns the process and sends the handshake without reading
the reply; the first use reads it with every check a plain start makes.  ``EarlyStart``
hands the launched adapter from the CLI to the pytest session, and ends it when the
session never takes it.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_conformance.adapters.contract import AdapterFault
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.cli import main
from dsh_conformance.early_start import EarlyStart

SERVE = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
SERVED = "subprocess:" + shlex.join(SERVE)

#: A served reference model that appends one line per process start (its pid) to the
#: file named by $LOG and says when it got its handshake.
LOGGING_HOST = textwrap.dedent(
    """
    import os, sys
    with open(os.environ["LOG"], "a") as log:
        log.write(f"start {os.getpid()}\\n")
    from dsh_conformance.adapters import serve
    sys.exit(serve.main([]))
    """
)


def _ended(adapter_pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(adapter_pid, 0)
        except ProcessLookupError:
            return True
        try:  # reaped by close(), or a zombie of ours: either way it has exited
            done, _ = os.waitpid(adapter_pid, os.WNOHANG)
            if done:
                return True
        except ChildProcessError:
            return True
        time.sleep(0.02)
    return False


def test_launch_answers_the_handshake_before_it_is_read() -> None:
    adapter = SubprocessAdapter(SERVE, timeout=10)
    try:
        adapter.launch()
        process = adapter._process
        assert process is not None
        pid = adapter.pid
        line = process.next_line(10.0)  # the reply came without handshake() asking
        assert isinstance(line, bytes)
        assert json.loads(line)["id"] == 0
        process.lines.appendleft(line)  # handed back: handshake() reads it
        adapter.launch()  # a no-op once started
        assert adapter.pid == pid
        handshake = adapter.handshake()
        assert handshake.implementation.name
        assert adapter.pid == pid  # the launched process, not a second one
        assert adapter.call("uri.encode", {"sessionId": "a"}).startswith("dsh-session:")
        assert adapter.restarts == 0
    finally:
        adapter.close()


def test_a_launched_adapter_closed_unread_ends_its_process() -> None:
    adapter = SubprocessAdapter(SERVE, timeout=10)
    adapter.launch()
    process = adapter._process
    assert process is not None
    adapter.close()
    assert process.popen.poll() == 0  # handshake and shutdown answered, a clean exit


def test_a_launched_handshake_keeps_its_checks() -> None:
    """The reply read later is judged as a plain start judges it."""
    argv = [sys.executable, "-m", "dsh_conformance.adapters.fake", "--fault", "bad-protocol"]
    adapter = SubprocessAdapter(argv, timeout=5)
    try:
        adapter.launch()
        with pytest.raises(AdapterFault, match="protocol mismatch"):
            adapter.handshake()
    finally:
        adapter.close()
    with pytest.raises(AdapterFault, match="cannot start"):
        SubprocessAdapter(["/nonexistent/implementation"]).launch()


def test_only_subprocess_names_start_early() -> None:
    assert EarlyStart.launch("reference") is None
    assert EarlyStart.launch("subprocess:") is None  # a bad name: the session reports it
    assert EarlyStart.launch("subprocess:/nonexistent/implementation") is None


def test_early_start_hands_over_once_and_ends_what_was_not_taken() -> None:
    early = EarlyStart.launch(SERVED)
    assert early is not None
    adapter = early.take(SERVED)
    assert isinstance(adapter, SubprocessAdapter)
    try:
        assert early.take(SERVED) is None  # once
        assert adapter.handshake().capabilities
    finally:
        adapter.close()

    unused = EarlyStart.launch(SERVED)
    assert unused is not None
    pid = unused._adapter.pid  # type: ignore[union-attr]
    assert pid is not None
    assert unused.take("subprocess:another") is None  # not the adapter asked for
    assert _ended(pid)

    untaken = EarlyStart.launch(SERVED)
    assert untaken is not None
    pid = untaken._adapter.pid  # type: ignore[union-attr]
    assert pid is not None
    untaken.close_unused()
    untaken.close_unused()  # idempotent
    assert _ended(pid)


@pytest.mark.parametrize("keyword", ["", "no-test-has-this-name"])
def test_a_run_starts_the_host_once_and_leaves_none_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyword: str
) -> None:
    """Launched by the CLI, the host is the one the session uses (one start); with
    nothing selected it is still ended."""
    host = tmp_path / "host.py"
    host.write_text(LOGGING_HOST, encoding="utf-8")
    log = tmp_path / "starts.log"
    monkeypatch.setenv("LOG", str(log))
    args = ["run", "--adapter", "subprocess:" + shlex.join([sys.executable, str(host)])]
    args += ["--hypothesis-profile", "fixed", "-r", "URI-001", "--no-expectations"]
    args += ["--report-dir", str(tmp_path / "out"), "--seed", "1"]
    if keyword:
        args += ["-k", keyword]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code in ((5,) if keyword else (0,)), result.output
    starts = log.read_text(encoding="utf-8").split()
    assert starts[::2] == ["start"]  # one process, started once
    assert _ended(int(starts[1]))
