"""A reply already in the pipe is read before the wait sleeps in select (D-537).

``Process.next_line`` polls the pipe for ``SPIN`` seconds when nothing is left to write;
what it returns, and every fault after it, are the select loop's.
"""

from __future__ import annotations

import json
import select
import sys

import pytest

from dsh_conformance.adapters import process as process_module
from dsh_conformance.adapters import wire
from dsh_conformance.adapters.process import Process


def _process() -> Process:
    argv = [sys.executable, "-m", "dsh_conformance.adapters.serve"]
    return Process(argv, None, None, wire.DEFAULT_MAX_REPLY_BYTES)


def test_a_waiting_reply_is_read_without_select(monkeypatch: pytest.MonkeyPatch) -> None:
    process = _process()
    try:
        process.send(wire.encode(wire.handshake_request(0)))
        ready, _, _ = select.select([process.stdout_fd], [], [], 30.0)  # it has arrived
        assert ready

        def refuse(*args: object) -> None:
            raise AssertionError("waited in select for a reply already there")

        monkeypatch.setattr(select, "select", refuse)
        line = process.next_line(5.0)
        assert isinstance(line, bytes)
        assert json.loads(line)["id"] == 0
        with pytest.raises(AssertionError, match="already there"):
            process.next_line(5.0)  # nothing arrives while polling: then select waits
    finally:
        monkeypatch.undo()
        process.kill()


def test_an_end_of_output_is_seen_while_polling() -> None:
    process = _process()
    try:
        process.popen.stdin.close()  # type: ignore[union-attr]
        process.popen.wait(30)
        assert process.next_line(5.0) == process_module.EOF
    finally:
        process.kill()
