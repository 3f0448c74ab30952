"""Bad inputs end in one diagnostic line and a documented exit status, never a traceback;
incomplete records never pass a gate by accident (decisions D-136, D-139)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import record

from dsh_conformance.cli import main
from dsh_conformance.errors import EXIT_STATUSES
from dsh_conformance.record import RecordWriter

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTED = {code for code, _ in EXIT_STATUSES}


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def one_error(err: str, code: str) -> None:
    """stderr is ``error[code] message`` (one line) and at most a hint line."""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines, "no diagnostic"
    assert lines[-2 if len(lines) > 1 and "hint:" in lines[-1] else -1].startswith(
        f"error[{code}] "
    ), err
    assert len([line for line in lines if line.startswith("error[")]) == 1


def bad_files(tmp_path: Path) -> dict[str, tuple[Path, str, int]]:
    """Each kind of unreadable record: (path, error code, exit status)."""
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(b'{"type":"header","format":"dsh-conformance-record","x":"\xe9"}\n')
    wrong_type = record(tmp_path / "typed.jsonl", "pass")
    text = re.sub(r'"duration": ?[0-9.]+', '"duration":"slow"', wrong_type.read_text("utf-8"))
    wrong_type.write_text(text, encoding="utf-8")
    bad_outcome = record(tmp_path / "outcome.jsonl", "pass")
    text = bad_outcome.read_text(encoding="utf-8").replace('"pass"', '"passed"')
    bad_outcome.write_text(text, encoding="utf-8")
    list_line = record(tmp_path / "list.jsonl", "pass")
    list_line.write_text(list_line.read_text(encoding="utf-8") + "[1, 2]\n", encoding="utf-8")
    truncated_json = record(tmp_path / "cut-json.jsonl", "pass")
    truncated_json.write_text(
        truncated_json.read_text(encoding="utf-8") + '{"type": "te\n', encoding="utf-8"
    )
    return {
        "non-utf8": (latin, "record-not-utf8", 65),
        "directory": (tmp_path, "record-is-directory", 65),
        "wrong-type": (wrong_type, "record-invalid", 65),
        "unknown-outcome": (bad_outcome, "record-invalid", 65),
        "not-an-object": (list_line, "record-not-json", 65),
        "malformed-json": (truncated_json, "record-not-json", 65),
        "missing": (tmp_path / "nope.jsonl", "no-such-record", 66),
    }


@pytest.mark.parametrize(
    "kind",
    [
        "non-utf8",
        "directory",
        "wrong-type",
        "unknown-outcome",
        "not-an-object",
        "malformed-json",
        "missing",
    ],
)
@pytest.mark.parametrize("command", ["summary", "diff", "report"])
def test_unreadable_records_are_one_line_errors(tmp_path: Path, kind: str, command: str) -> None:
    path, code, status = bad_files(tmp_path)[kind]
    good = record(tmp_path / "good.jsonl", "pass")
    args = {"summary": [str(path)], "diff": [str(good), str(path)], "report": [str(path)]}
    got, _, err = invoke(command, *args[command])
    assert got == status, err
    assert status in DOCUMENTED
    one_error(err, code)


def test_bad_option_values_are_usage_errors() -> None:
    for args in (["run", "--timeout", "-1"], ["run", "--timeout", "0"], ["run", "-n", "0"]):
        status, _, err = invoke(*args)
        assert status == 2, (args, err)
        one_error(err, "usage")
    status, _, err = invoke("no-such-command")
    assert status == 2
    one_error(err, "usage")


def test_unwritable_outputs_fail_before_the_run_starts(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    status, _, err = invoke("run", "--report-dir", str(blocker / "out"), "-r", "URI-001")
    assert status == 73, err
    one_error(err, "cannot-write")
    status, _, err = invoke("run", "--write-expectations", str(tmp_path), "-r", "URI-001")
    assert status == 2, err  # a directory where a file belongs: the option's value is wrong
    one_error(err, "usage")
    status, _, err = invoke("run", "--write-expectations", str(blocker / "m.toml"), "-r", "URI-001")
    assert status == 73, err
    good = record(tmp_path / "good.jsonl", "pass")
    status, _, err = invoke("report", str(good), "-o", str(blocker / "r.html"))
    assert status == 73, err
    one_error(err, "cannot-write")


def footer_record(path: Path, footer: dict[str, str] | None, *outcomes: str) -> Path:
    writer = RecordWriter(path)
    writer.header({"spec_profile": "seed", "adapter": {"name": "x"}, "selected": 9})
    from dsh_conformance.outcomes import Outcome
    from dsh_conformance.record import TestResult

    for index, outcome in enumerate(outcomes):
        writer.test(TestResult(f"conformance/test_uri.py::t{index}", Outcome(outcome)))
    if footer is not None:
        writer.footer(footer)
    writer.close()
    return path


@pytest.mark.parametrize(
    ("footer", "words"),
    [
        ({"status": "interrupted", "signal": "SIGINT"}, "interrupted by SIGINT"),
        ({"status": "aborted", "reason": "adapter gone"}, "aborted: adapter gone"),
        ({"status": "stopped", "reason": "-x"}, "stopped"),
        (None, "truncated"),
    ],
)
def test_summary_and_diff_fail_incomplete_records(
    tmp_path: Path, footer: dict[str, str] | None, words: str
) -> None:
    partial = footer_record(tmp_path / "partial.jsonl", footer, "pass", "pass")
    baseline = footer_record(tmp_path / "base.jsonl", {"status": "complete"}, "pass", "pass")
    status, _, err = invoke("summary", str(partial))
    assert status == 3, err
    one_error(err, "incomplete-record")
    assert words in err
    assert "2 of 9 tests" in err
    status, _, err = invoke("diff", str(baseline), str(partial))
    assert status == 3, err
    one_error(err, "incomplete-record")
    assert invoke("diff", str(partial), str(baseline))[0] == 3  # either side
    assert invoke("summary", str(partial), "--allow-incomplete")[0] == 0
    assert invoke("diff", str(baseline), str(partial), "--allow-incomplete")[0] == 0


def test_a_footer_must_say_why_it_is_not_complete(tmp_path: Path) -> None:
    path = footer_record(tmp_path / "x.jsonl", {"status": "interrupted"}, "pass")
    status, _, err = invoke("summary", str(path))
    assert status == 65
    one_error(err, "record-invalid")


def test_the_exit_status_table_is_in_help_and_docs() -> None:
    status, out, _ = invoke("--help")
    assert status == 0
    docs = (ROOT / "docs" / "harness.md").read_text(encoding="utf-8")
    for code, meaning in EXIT_STATUSES:
        assert re.search(rf"^\s*{code}\s+{re.escape(meaning)}$", out, re.M), code
        assert f"| {code} | {meaning} |" in docs, code
