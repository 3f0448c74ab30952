"""Reports and a command line a host author reads without knowing Python (issue 38).

A failure reads as a conformance failure (D-310): requirement, note sentence, input,
expected and actual as JSON, a replay of exactly that case; the traceback last and
cleaned.  Bad inputs end in one diagnostic with a stable code and status; a run that
starts always leaves its reports.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import TESTS, cli, cli_argv

from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord, load_record
from dsh_conformance.reporting.replay import replay_test_command

#: What a host author must never meet: Python reprs, class paths, Hypothesis knobs.
PYTHON_SPELLINGS = re.compile(
    r"object at 0x|CheckFailure|Verbosity|Failing explicit example|Falsifying|"
    r"reproduce_failure|^\s*\?\s+\^"
)
BENT = "python:fauxmplementations:padded"  # uri.encode keeps '=' padding
SELECT = ("--requirement", "URI-*", "--seed", "7", "--hypothesis-profile", "dev")


def _piped(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI with stdout and stderr piped and no COLUMNS: what a CI log captures."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = str(TESTS)
    return subprocess.run(
        cli_argv(*args), capture_output=True, text=True, env=env, timeout=600, check=False
    )


@pytest.fixture(scope="module")
def bent_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, RunRecord]:
    out = tmp_path_factory.mktemp("bent") / "out"
    done = _piped("run", "--adapter", BENT, "--report-dir", str(out), "--fail-on", "all", *SELECT)
    assert done.returncode == 1, done.stderr
    return out, done.stdout, done.stderr, load_record(out / "record.jsonl")


def test_a_bent_uri_encode_leaves_no_python_spelling_in_any_report(
    bent_run: tuple[Path, str, str, RunRecord],
) -> None:
    out, stdout, stderr, _ = bent_run
    texts = {
        "report.html": (out / "report.html").read_text(encoding="utf-8"),
        "junit.xml": (out / "junit.xml").read_text(encoding="utf-8"),
        "report.md": (out / "report.md").read_text(encoding="utf-8"),
        "stdout": stdout,
        "stderr": stderr,
    }
    for name, text in texts.items():
        found = [m.group() for m in PYTHON_SPELLINGS.finditer(text)]
        assert not found, f"{name}: {found[:5]}"


def test_a_failure_leads_with_requirement_sentence_input_expected_actual_and_replay(
    bent_run: tuple[Path, str, str, RunRecord],
) -> None:
    out, stdout, _, record = bent_run
    (test,) = [t for t in record.tests if t.nodeid.endswith("[foundation:uri-encode-empty]")]
    (check,) = test.failure["checks"]
    assert check["requirement"] == "REF-010"
    assert check["sentence"].startswith("Every static case")
    assert check["expected"] == '"dsh-session:IiI"'  # JSON, not a Python repr
    assert check["actual"] == '"dsh-session:IiI="'
    assert check["input"]["op"] == '"uri.encode"'
    replay = "--test 'conformance/test_cases.py::test_case[foundation:uri-encode-empty]'"
    assert test.failure["replay"].endswith(replay)
    markdown = (out / "report.md").read_text(encoding="utf-8")
    details = markdown[markdown.index(f". `{test.nodeid}`") :]  # its #### block
    first = details.index("Python traceback")
    for part in ('expected: "dsh-session:IiI"', 'actual:   "dsh-session:IiI="', replay):
        assert details.index(part) < first, part  # the failure first, the traceback last
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    body = junit[junit.index("uri-encode-empty]") :]
    assert body.index("actual:") < body.index("Python traceback")
    # a Hypothesis example's arguments are input as JSON; the fixture impl is left out
    (prop,) = [t for t in record.tests if "test_encode_is_scheme" in t.nodeid]
    (check,) = prop.failure["checks"]
    assert check["requirement"] == "URI-004"
    assert "impl" not in check["input"]
    assert check["input"]["uri"].startswith('"dsh-session:')
    assert "REF-010: result: expected" in stdout


def test_the_replay_reruns_exactly_one_case(
    tmp_path: Path, bent_run: tuple[Path, str, str, RunRecord]
) -> None:
    _, _, _, record = bent_run
    (test,) = [t for t in record.tests if t.nodeid.endswith("[foundation:uri-encode-empty]")]
    argv = shlex.split(replay_test_command(record, test))
    assert argv[:2] == ["dsh-conformance", "run"]
    out = tmp_path / "replay"
    done = cli(*argv[1:], "--report-dir", str(out))
    assert done.returncode == 0, done.stderr  # REF-010 is a profile requirement
    replayed = load_record(out / "record.jsonl")
    assert [(t.nodeid, t.outcome) for t in replayed.tests] == [(test.nodeid, Outcome.FAIL)]


def test_piped_output_never_wraps_a_replay_or_cuts_a_title(
    bent_run: tuple[Path, str, str, RunRecord],
) -> None:
    _, stdout, _, _ = bent_run
    lines = stdout.splitlines()
    replays = [line for line in lines if "replay: dsh-conformance run" in line]
    assert replays
    for line in replays:  # whole on one line: pastes as it is
        assert "--spec-profile" in line
    assert any("--test 'conformance/test_cases.py::test_case[" in line for line in replays)
    assert any("Static vectors reproduced byte for byte" in line for line in lines)
    assert not any(line.startswith("--") for line in lines)


def test_a_notepad_manifest_is_one_line_and_exit_65(tmp_path: Path) -> None:
    manifest = tmp_path / "expect.toml"
    manifest.write_bytes('adapter = "reference"\n'.encode("utf-16"))  # BOM + UTF-16LE
    done = cli("run", "--expectations", str(manifest), "-r", "URI-001")
    assert done.returncode == 65, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error[")]
    assert len(errors) == 1
    assert errors[0].startswith("error[manifest-not-utf8]")
    assert "UTF-16" in errors[0]
    assert "Traceback" not in done.stderr


def test_an_adapter_that_cannot_start_still_leaves_reports_that_say_why(tmp_path: Path) -> None:
    out = tmp_path / "out"
    dies = "subprocess:" + shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"])
    done = cli("run", "--adapter", dies, "--report-dir", str(out), "-r", "URI-001")
    assert done.returncode == 70, done.stderr
    for name in ("report.md", "junit.xml", "report.html", "report.json", "badge.json"):
        assert (out / name).is_file(), name
    assert "exited with status 3" in (out / "report.md").read_text(encoding="utf-8")
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert "<error" in junit  # CI publishers show red
    assert "exited with status 3" in junit


def test_a_k_expression_pytest_cannot_parse_is_a_usage_error() -> None:
    done = cli("run", "-k", "(((")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error[usage] -k (((")
    assert "run-aborted" not in done.stderr


def test_the_handshake_waits_no_longer_than_timeout(tmp_path: Path) -> None:
    """A short --timeout is honoured for the handshake (D-311): no hidden 30 s floor."""
    silent = "subprocess:" + shlex.join([sys.executable, "-c", "import time; time.sleep(600)"])
    done = cli("run", "--adapter", silent, "--timeout", "0.5", "-r", "URI-001", timeout=120)
    assert done.returncode == 70, done.stderr
    assert "within the 0.5s per-call timeout" in done.stderr


def test_a_handshake_without_protocol_is_named_without_python(tmp_path: Path) -> None:
    script = tmp_path / "adapter.py"
    script.write_text(
        "import sys, json\n"
        "sys.stdin.readline()\n"
        'print(json.dumps({"id": 0, "result": {"implementation": {"name": "x"}}}), flush=True)\n'
        "sys.stdin.readline()\n",
        encoding="utf-8",
    )
    adapter = "subprocess:" + shlex.join([sys.executable, str(script)])
    done = cli("run", "--adapter", adapter, "-r", "URI-001")
    assert done.returncode == 70, done.stderr
    assert "names no protocol version" in done.stderr
    assert "None" not in done.stderr


def test_write_expectations_writes_one_clean_line(tmp_path: Path) -> None:
    manifest = tmp_path / "expect.toml"
    cli("run", "--adapter", BENT, *SELECT, "--write-expectations", str(manifest))
    reasons = [
        line
        for line in manifest.read_text(encoding="utf-8").splitlines()
        if line.startswith("reason")
    ]
    assert reasons
    for line in reasons:
        assert "CheckFailure" not in line
        assert "\\u000a" not in line
        assert "\\n" not in line
        assert len(line) < 340


def test_the_terminal_spells_unprintable_characters_as_javascript_does() -> None:
    from dsh_conformance.reporting.escape import for_terminal

    shown = for_terminal("id \U0009c4bf and \u2060 and é\n")
    assert shown == "id \\u{9c4bf} and \\u2060 and é\n"
    assert "\\U" not in shown


def test_a_fault_carries_its_own_request_in_flight() -> None:
    """The report names the request of the fault it names, not a later one's."""
    from dsh_conformance.adapters.contract import AdapterFault
    from dsh_conformance.guard import REQUEST_ATTR, FaultGuard

    class Crashy:
        def call(self, op: str, args: dict[str, object]) -> object:
            if op == "ok":
                return None
            raise AdapterFault("crash", f"crashed on {op}")

        def close(self) -> None:
            pass

    guard = FaultGuard(Crashy())  # type: ignore[arg-type]
    guard.begin_test()
    guard.call("ok", {})
    faults = []
    for op in ("uri.encode", "uri.decode"):
        with pytest.raises(AdapterFault) as caught:
            guard.call(op, {"x": 1})
        faults.append(caught.value)
    assert [getattr(f, REQUEST_ATTR)["op"] for f in faults] == ["uri.encode", "uri.decode"]
