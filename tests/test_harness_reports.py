"""Run records and renderers: reading back, truncation, escaping, diffs."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dsh_conformance.errors import RecordError
from dsh_conformance.outcomes import Outcome, classify_failure, classify_skip
from dsh_conformance.record import RecordWriter, TestResult, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.diff import diff
from dsh_conformance.reporting.exitstatus import run_failed
from dsh_conformance.reporting.rows import compliance, requirement_rows

HOSTILE = "\x1b[2J\x1b]0;pwned\x07 <script>alert(1)</script> | [red]x[/red] \x9b\u202e"


def write(
    path: Path, tests: list[TestResult], *, footer: bool = True, filtered: bool = True
) -> Path:
    writer = RecordWriter(path)
    writer.header(
        {
            "suite_version": "0",
            "spec_version": "s",
            "spec_profile": "seed",
            "adapter": {"name": "x", "implementation": {"name": "impl " + HOSTILE, "version": "1"}},
            "filters": {"requirements": ["URI-*"] if filtered else []},
            "selected": len(tests),
        }
    )
    for test in tests:
        writer.test(test)
    if footer:
        writer.footer({"status": "complete", "expectation_problems": []})
    writer.close()
    return path


def t(name: str, outcome: str, *reqs: str, message: str = "") -> TestResult:
    return TestResult(
        f"conformance/test_uri.py::{name}",
        Outcome(outcome),
        reqs or ("URI-001",),
        ("uri",),
        0.01,
        message,
    )


def test_records_round_trip_and_detect_truncation(tmp_path: Path) -> None:
    tests = [t("a", "pass"), t("b", "fail", "URI-002", message="m \ud800"), t("c", "unsupported")]
    record = load_record(write(tmp_path / "r.jsonl", tests))
    assert record.tests == tuple(tests)
    assert not record.truncated
    cut = load_record(write(tmp_path / "cut.jsonl", tests[:1], footer=False))
    assert cut.truncated
    assert run_failed(cut)


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("", "empty-record"),
        ("not json\n", "record-not-json"),
        ('{"type":"test","nodeid":"x","outcome":"pass"}\n', "missing-header"),
        ('{"type":"header","format":"other"}\n', "not-a-record"),
    ],
)
def test_unreadable_records_are_typed(tmp_path: Path, content: str, code: str) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(content)
    with pytest.raises(RecordError) as caught:
        load_record(path)
    assert caught.value.code == code


def test_duplicate_tests_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(RecordError, match="twice"):
        load_record(write(tmp_path / "r.jsonl", [t("a", "pass"), t("a", "fail")]))


def test_requirement_status_and_compliance_count_only_applicable(tmp_path: Path) -> None:
    record = load_record(
        write(
            tmp_path / "r.jsonl",
            [
                t("a", "pass", "URI-001"),
                t("b", "fail", "URI-002"),
                t("c", "unsupported", "URI-003"),
                t("d", "xfail", "URI-004"),
                t("e", "pass", "URI-004"),
                t("f", "skipped", "URI-005"),
            ],
        )
    )
    rows = {r.id: r.status for r in requirement_rows(record)}
    assert rows == {
        "URI-001": "pass",
        "URI-002": "fail",
        "URI-003": "unsupported",
        "URI-004": "xfail",
        "URI-005": "not applicable",
    }
    assert compliance(record) == pytest.approx(2 / 4)


def test_unfiltered_runs_list_untested_requirements(tmp_path: Path) -> None:
    record = load_record(write(tmp_path / "r.jsonl", [t("a", "pass")], filtered=False))
    statuses = {r.status for r in requirement_rows(record)}
    assert "untested" in statuses or "not applicable" in statuses


def test_every_renderer_escapes_adapter_text(tmp_path: Path) -> None:
    record = load_record(
        write(
            tmp_path / "r.jsonl",
            [t("a", "fail", message=HOSTILE), t("b", "crash", message=HOSTILE)],
        )
    )
    outputs = {
        "markdown": markdown.render(record),
        "junit": junit.render(record),
        "html": html.render([record, record]),
        "json": jsonreport.render(record),
    }
    for name, text in outputs.items():
        for control in ("\x1b", "\x9b", "\x07"):
            assert control not in text, name
        assert "\u202e" not in text, name
    assert "<script>alert" not in outputs["html"]
    assert "&lt;script&gt;" in outputs["html"]
    ET.fromstring(outputs["junit"].split("?>", 1)[1])  # well-formed XML
    assert "\\x1b[2J" in outputs["markdown"]
    assert json.loads(outputs["json"])["totals"] == {"crash": 1, "fail": 1}
    for line in outputs["markdown"].splitlines():
        if line.startswith("| `conformance"):
            assert line.count(" | ") == 3  # the message's '|' cannot add a column


def test_junit_counts_and_properties(tmp_path: Path) -> None:
    record = load_record(
        write(
            tmp_path / "r.jsonl",
            [t("a", "pass"), t("b", "fail"), t("c", "timeout"), t("d", "unsupported")],
        )
    )
    suite = ET.fromstring(junit.render(record).split("?>", 1)[1]).find("testsuite")
    assert suite is not None
    assert (
        suite.get("tests"),
        suite.get("failures"),
        suite.get("errors"),
        suite.get("skipped"),
    ) == ("5", "1", "2", "1")  # the timeout is also the run problem adapter-unreliable
    (run,) = suite.findall("testcase[@name='run']/error")
    assert run.get("type") == "adapter-unreliable"
    props = suite.findall("testcase/properties/property[@name='requirement']")
    assert {p.get("value") for p in props} == {"URI-001"}


def test_diff_finds_regressions_fixes_and_new_skips(tmp_path: Path) -> None:
    old = load_record(
        write(
            tmp_path / "old.jsonl", [t("a", "pass"), t("b", "fail"), t("c", "pass"), t("d", "pass")]
        )
    )
    new = load_record(
        write(
            tmp_path / "new.jsonl",
            [t("a", "fail"), t("b", "pass"), t("c", "unsupported"), t("e", "crash")],
        )
    )
    result = diff(old, new)
    assert [c.nodeid.split("::")[1] for c in result.new_failures] == ["a", "e"]
    assert [c.nodeid.split("::")[1] for c in result.fixed] == ["b"]
    assert [c.nodeid.split("::")[1] for c in result.newly_skipped] == ["c"]
    assert [c.nodeid.split("::")[1] for c in result.removed] == ["d"]
    assert result.regressed


def test_failure_classification() -> None:
    from dsh_conformance.adapters.contract import AdapterFault, ImplementationError

    assert classify_failure(AssertionError()) is Outcome.FAIL
    assert classify_failure(ImplementationError("X", "m")) is Outcome.ERROR
    group = ExceptionGroup("g", [ValueError(), AdapterFault("timeout", "t")])
    assert classify_failure(group) is Outcome.TIMEOUT
    wrapped = AssertionError("wrapped")
    wrapped.__cause__ = AdapterFault("garbage", "g")
    assert classify_failure(wrapped) is Outcome.CRASH
    assert classify_skip("Skipped: unsupported: uri") is Outcome.UNSUPPORTED
    assert classify_skip("because") is Outcome.SKIPPED


def test_reports_say_how_to_replay_the_run(tmp_path: Path) -> None:
    import shlex

    from dsh_conformance.reporting.replay import replay_command

    path = write(tmp_path / "r.jsonl", [t("a", "fail")])
    text = path.read_text().replace(
        '"selected"', '"hypothesis":{"seed":42,"profile":"ci"},"selected"'
    )
    path.write_text(text)
    record = load_record(path)
    argv = shlex.split(replay_command(record))
    assert argv[:4] == ["dsh-conformance", "run", "--adapter", "x"]
    assert argv[argv.index("--seed") + 1] == "42"
    assert argv[argv.index("--hypothesis-profile") + 1] == "ci"
    assert argv[argv.index("--requirement") + 1] == "URI-*"
    assert "replay: `dsh-conformance run" in markdown.render(record)
