"""What the served reference model imports before it needs it (issue 44).

A served process's imports are part of its peak memory (tools/bench_upstream.py
``memory_wire``: 0.71x the text of a 21 MB prepare request before these were cut to
0.40x).  These tests catch a module creeping back onto the served path: the subprocess
and upstream adapters (with hashlib's OpenSSL, 4 MB) that the registry loads only for
their own kinds, argparse for a command line with no arguments, the spec package and
its TOML and zip machinery that the scenario validators load on the first script, and
the long-line path (adapters/large_request.py, adapters/line_spool.py), which a process
that never reads a long line never imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dsh_conformance.adapters import wire
from dsh_conformance.adapters.registry import known, resolve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import bench_upstream as inputs

#: Modules the served model must not import for a handshake and a short call.
NOT_AT_START = (
    "dsh_conformance.adapters.subprocess",
    "dsh_conformance.adapters.upstream",
    "dsh_conformance.adapters.exchange",
    "dsh_conformance.spec",
    "dsh_conformance.adapters.large_request",
    "dsh_conformance.adapters.line_spool",
    "hashlib",
    "_hashlib",
    "tomllib",
    "zipfile",
    "tempfile",
    "shutil",
    "argparse",
)

#: Serve the reference model on stdin, then list which of those it imported.  Modules
#: the interpreter already held before the first project import (a site ``.pth`` file
#: may load tempfile and zipfile, as CI's does) are the environment's, not the model's.
SERVED = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "import json\n"
    "from dsh_conformance.adapters import serve\n"
    "status = serve.main([])\n"
    f"loaded = sorted(m for m in sys.modules if m in {NOT_AT_START!r} and m not in before)\n"
    "print(json.dumps(loaded), file=sys.stderr)\n"
    "raise SystemExit(status)\n"
)


def _serve(lines: bytes) -> tuple[list[dict[str, object]], list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", SERVED], input=lines, capture_output=True, check=True, timeout=120
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    loaded: list[str] = json.loads(done.stderr.decode().strip().splitlines()[-1])
    return replies, loaded


def test_a_handshake_and_a_short_call_import_none_of_them() -> None:
    replies, loaded = _serve(
        wire.encode(wire.handshake_request(1))
        + wire.encode(wire.request(2, "uri.encode", {"sessionId": "a b"}))
        + wire.encode(wire.request(3, "shutdown", {}))
    )
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert "result" in replies[1], replies[1]
    assert loaded == []


def test_a_long_prepare_line_imports_the_long_path_and_nothing_else() -> None:
    args = inputs.prepare_args(inputs.session_json(600))
    replies, loaded = _serve(
        wire.encode(wire.request(1, "prepare", args)) + wire.encode(wire.request(2, "shutdown", {}))
    )
    assert "result" in replies[0], replies[0]
    assert loaded == [
        "dsh_conformance.adapters.large_request",
        "dsh_conformance.adapters.line_spool",
    ]


def test_the_other_adapter_kinds_still_resolve_and_are_listed() -> None:
    """The registry loads the plugin modules when a name needs them."""
    assert {"reference", "python", "subprocess", "upstream"} <= set(known())
    adapter = resolve(f"subprocess:{sys.executable} -m dsh_conformance.adapters.serve")
    try:
        assert adapter.handshake().protocol == wire.PROTOCOL_VERSION
    finally:
        adapter.close()
