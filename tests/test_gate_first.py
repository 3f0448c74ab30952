"""What fails the gate comes first, in every report (issue 43 items 1 and 2, D-460..D-463).

The rc.8 run at --seed 12345: 72 expected failures, 19 tests the manifest marks
unsupported and one unexpected pass (a generated test that drew no partial reply).  Before:
the terminal printed 30 XFAIL blocks and never named the unexpected pass; report.md put 96
lines of expected failures before it; report.json's gate.unexpected said ``blame: []``
where md and html said PROJ-004; junit.xml read ``failures=1 skipped=322`` for a release
failing 23 seed MUSTs.  The record below has the same shape, small.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from markdown_it import MarkdownIt
from rich.console import Console

from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.diff import diff
from dsh_conformance.reporting.judgement import judge
from dsh_conformance.reporting.terminal import print_summary

XPASS_ID = "conformance/test_scenario_partial.py::test_no_generated_run_projects_a_partial_reply"
MANIFEST_REASON = "PROJ-004: the rc.8 agent loop logs a cancelled stream's partial text"


def _header() -> dict[str, object]:
    return {
        "suite_version": "0",
        "spec_profile": "seed",
        "expectations": "adapters/expectations/upstream.toml",
        "hypothesis": {"profile": "dev", "seed": 12345},
        "adapter": {
            "name": "upstream",
            "capabilities": ["uri", "mention", "projection", "scenario"],
            "implementation": {"name": "release", "version": "0.1.0-rc.8"},
        },
    }


def _expected(index: int, requirement: str) -> TestResult:
    return TestResult(
        f"conformance/test_uri.py::test_expected[{index}]",
        Outcome.XFAIL,
        (requirement,),
        message=f"[{requirement}] differs",
        blame=(requirement,),
        detail="fail",
        expectation=f"conformance/test_uri.py::test_expected[{index}]",
        expectation_reason=f"{requirement}: known difference number {index}",
    )


def rc8_like() -> RunRecord:
    tests = [_expected(i, r) for i, r in enumerate(["URI-001", "URI-004", "MENTION-001"] * 12)]
    tests += [
        TestResult(f"conformance/test_uri.py::test_pass[{i}]", Outcome.PASS, ("URI-002",))
        for i in range(5)
    ]
    tests.insert(
        20,
        TestResult(
            XPASS_ID,
            Outcome.XPASS,
            ("PROJ-004",),
            message=f"unexpected pass: the manifest says {XPASS_ID} fails",
            expectation=XPASS_ID,
            expectation_reason=MANIFEST_REASON,
            judged=("PROJ-004",),
        ),
    )
    return RunRecord(_header(), tuple(tests), {"status": "complete", "expectation_problems": []})


def test_the_unexpected_pass_is_the_first_failure_block_of_the_terminal() -> None:
    console = Console(record=True, width=300)
    print_summary(rc8_like(), console)
    text = console.export_text()
    lines = text.splitlines()
    gate = next(i for i, line in enumerate(lines) if line.startswith("gate: "))
    assert gate < 8  # the headline first: title, verdicts, the gate
    assert lines[gate + 1].strip() == f"unexpected pass (about PROJ-004): {XPASS_ID}"
    first_block = next(i for i, line in enumerate(lines) if line.startswith(("XPASS", "XFAIL")))
    assert lines[first_block].startswith(f"XPASS   {XPASS_ID}")
    assert MANIFEST_REASON in lines[first_block + 2]
    assert "XFAIL" not in text  # expected failures are a count, not blocks
    assert "expected by the manifest: 36 failures, 0 unsupported tests" in text
    assert "report.md#expected" in text
    assert first_block < text.count("\n") // 2  # above the table, not after it
    console = Console(record=True, width=300)
    print_summary(rc8_like(), console, all_rows=True)  # --all: each expected result
    assert "known difference number 35" in console.export_text()


def test_the_unexpected_pass_is_the_first_section_of_report_md() -> None:
    md = markdown.render(rc8_like())
    headings = [line for line in md.splitlines() if line.startswith("### ")]
    assert headings[0] == "### Fails the gate (1)"
    assert headings[-1] == "### Expected"
    section = md[md.index("### Fails the gate") : md.index(headings[1])]
    assert XPASS_ID in section
    assert "**unexpected pass** (xpass, about PROJ-004)" in section
    assert "PROJ-004: the rc.8 agent loop" in section
    assert "--test conformance/test_scenario_partial.py" in section  # its replay
    # the gate row points to the expected results, listed last under #expected
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    links = [t for block in tokens for t in block.children or [] if t.type == "link_open"]
    assert [t.attrGet("href") for t in links] == ["#expected"]
    assert md.index("known difference number 0") > md.index("### Expected")


def test_report_json_names_what_the_unexpected_pass_is_about() -> None:
    report = json.loads(jsonreport.render(rc8_like()))
    assert list(report)[:5] == ["problems", "ending", "complete", "verdicts", "gate"]
    (item,) = report["gate"]["unexpected"]
    assert item["nodeid"] == XPASS_ID
    assert item["kind"] == "unexpected pass"
    assert item["requirements"] == ["PROJ-004"]
    assert item["blame"] == []  # a pass blames nothing; the md and html say "about"
    assert item["expectation_reason"] == MANIFEST_REASON
    page = html.render([rc8_like()])
    assert "about PROJ-004" in page
    assert "blames PROJ-004" not in page
    assert page.index("Fails the gate (1)") < page.index('id="expected"')
    assert page.index("<h2>Requirements</h2>") < page.index('id="expected"')  # last


def test_junit_shows_the_failing_seed_musts_as_failed_test_cases() -> None:
    record = rc8_like()
    suites = ET.fromstring(junit.render(record))
    tests, conformance = suites.findall("testsuite")
    first = tests.find("testcase")
    assert first is not None
    assert first.get("name") == XPASS_ID.split("::")[1]  # the gate's result first
    assert first.find("failure") is not None
    assert conformance.get("name") == "conformance"
    seed = judge(record).seed
    assert int(conformance.get("tests", "0")) == seed.gating
    failed = {
        c.get("name", "").split(" ")[0]
        for c in conformance.iter("testcase")
        if c.find("failure") is not None
    }
    assert failed == set(seed.failing) == {"URI-001", "MENTION-001"}  # URI-004: profile
    assert int(conformance.get("failures", "0")) == 2
    uri = next(c for c in conformance.iter("testcase") if c.get("name", "").startswith("URI-001"))
    failure = uri.find("failure")
    assert failure is not None
    assert failure.get("type") == "xfail"  # expected by the manifest, still a failure
    skipped = [c for c in conformance.iter("testcase") if c.find("skipped") is not None]
    assert len(skipped) == int(conformance.get("skipped", "0")) > 0  # not judged: said


def test_every_format_counts_a_requirements_tests_alike() -> None:
    """html said `8 tests` where md said 6 pass, 0 fail: one definition now (D-462)."""
    tests = (
        *(TestResult(f"conformance/t.py::p[{i}]", Outcome.PASS, ("URI-002",)) for i in range(6)),
        TestResult(
            "conformance/t.py::u[0]", Outcome.UNSUPPORTED, ("URI-002",), message="unsupported"
        ),
        TestResult("conformance/t.py::c[0]", Outcome.CRASH, ("URI-002",), message="exited"),
    )
    record = RunRecord(_header(), tests, {"status": "complete"})
    row = next(r for r in judge(record).rows if r.id == "URI-002")
    assert row.tally == "6/6"
    assert row.not_judging == 2
    assert "| URI-002 | seed | MUST | ✅ pass | 6/6 |" in markdown.render(record)
    assert "6/6 tests pass, 2 judged nothing" in html.render([record])
    console = Console(record=True, width=300)
    print_summary(record, console, all_rows=True)
    assert any("URI-002" in line and " 6/6 " in line for line in console.export_text().splitlines())
    data = json.loads(jsonreport.render(record))
    entry = next(r for r in data["requirements"] if r["id"] == "URI-002")
    assert (entry["tests_passing"], entry["tests_failing"]) == (6, 0)


def test_the_terminal_table_lists_only_what_is_not_passing_unless_all() -> None:
    record = rc8_like()
    console = Console(record=True, width=300)
    print_summary(record, console)
    text = console.export_text()
    assert "│ URI-001" in text  # failing (expected): listed
    assert "│ URI-002" not in text  # passing: left out, and counted
    assert "(--all lists every requirement)" in text
    console = Console(record=True, width=300)
    print_summary(record, console, all_rows=True)
    assert "│ URI-002" in console.export_text()


def test_diff_does_not_count_pass_to_xpass_as_a_new_failure() -> None:
    def one(outcome: Outcome) -> RunRecord:
        test = TestResult("conformance/t.py::a", outcome, ("URI-001",))
        return RunRecord(_header(), (test,), {"status": "complete"})

    moved = diff(one(Outcome.PASS), one(Outcome.XPASS))
    assert moved.new_failures == ()
    assert moved.worse == ()
    assert diff(one(Outcome.PASS), one(Outcome.XFAIL)).new_failures  # a manifest hides none
    assert [c.nodeid for c in diff(one(Outcome.XFAIL), one(Outcome.XPASS)).fixed] == [
        "conformance/t.py::a"
    ]
