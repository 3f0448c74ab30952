"""The served model imports its validators only when it first validates (issue 44).

jsonschema, referencing and jsonschema-rs are about 20 MB of a served process's start
(0.92x the text of a 21 MB prepare request, tools/bench_upstream.py ``memory_wire``) and
are needed only to check a script or word an invalid value.  These tests catch a
top-level import of any of them creeping back onto the served path; a served model that
imports them lazily and still validates is what they accept.
"""

from __future__ import annotations

import json
import subprocess
import sys

from dsh_conformance.adapters import wire

VALIDATORS = ("jsonschema", "jsonschema_rs", "referencing")

#: Serve the reference model on stdin, then list which validator modules it imported.
SERVED = (
    "import json, sys\n"
    "from dsh_conformance.adapters import serve\n"
    "status = serve.main([])\n"
    f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {VALIDATORS!r})\n"
    "print(json.dumps(loaded), file=sys.stderr)\n"
    "raise SystemExit(status)\n"
)


def _serve(*requests: dict[str, object]) -> tuple[list[dict[str, object]], list[str]]:
    """The served model's replies to *requests* and the validator modules it loaded."""
    lines = b"".join(wire.encode(request) for request in requests)
    done = subprocess.run(
        [sys.executable, "-c", SERVED], input=lines, capture_output=True, check=True
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    loaded: list[str] = json.loads(done.stderr.decode().strip().splitlines()[-1])
    return replies, loaded


def test_a_handshake_and_a_uri_encode_import_no_validator() -> None:
    replies, loaded = _serve(
        wire.handshake_request(1),
        wire.request(2, "uri.encode", {"sessionId": "a b"}),
        wire.request(3, "shutdown", {}),
    )
    assert [reply["id"] for reply in replies] == [1, 2, 3]
    assert "result" in replies[1], replies[1]
    assert loaded == []


def test_an_invalid_script_still_loads_them_and_is_worded() -> None:
    """The lazy imports are still made where validation needs them."""
    replies, loaded = _serve(
        wire.handshake_request(1),
        wire.request(2, "scenario.run", {"script": {"agent": {}}}),
        wire.request(3, "shutdown", {}),
    )
    error = replies[1]["error"]
    assert isinstance(error, dict)
    assert error["code"] == "DSH_SCENARIO_INVALID", error
    assert {"jsonschema", "jsonschema_rs", "referencing"} <= {m.split(".")[0] for m in loaded}
