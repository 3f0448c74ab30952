"""The suite never refuses its own output (issue 37 item 4, D-215): every line the harness
writes validates against spec/schemas/record.json, whatever the implementation answered,
and every footer kind the harness can write is one the schema allows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_conformance import badge
from dsh_conformance.cli import main
from dsh_conformance.harness.expected import PROBLEM_KINDS
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, TestResult, check_line, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.judgement import judge
from dsh_conformance.spec import schema

#: Text a hostile implementation may put in an error message: lone surrogates, C0/C1
#: controls, escapes, bidi overrides, NUL.
HOSTILE = st.lists(
    st.one_of(
        st.text(max_size=8),
        st.sampled_from(["\x1b[2J", "\ud800", "\udfff", "\x00", "\u202e", "\x9b", "\n"]),
    ),
    max_size=5,
).map("".join)
IDS = st.sampled_from(["URI-001", "URI-005", "PROJ-004", "RET-004", "NOPE-999", ""])
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | HOSTILE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def results(draw: st.DrawFn, index: int) -> TestResult:
    outcome = draw(st.sampled_from(list(Outcome)))
    detail = ""
    if outcome is Outcome.XFAIL:
        detail = draw(st.sampled_from(["", "fail", "error", "crash", "timeout", "protocol"]))
    review: dict[str, Any] = {
        "requirement": draw(IDS),
        "sha256": draw(st.sampled_from(["0" * 64, "not-a-sha", ""])),
        "text": draw(HOSTILE),
    }
    return TestResult(
        nodeid=f"conformance/test_hostile.py::t{index}[{draw(HOSTILE)}]",
        outcome=outcome,
        requirements=draw(st.lists(IDS, max_size=3)),
        capabilities=draw(st.lists(HOSTILE, max_size=2)),
        duration=draw(st.floats(min_value=0, max_value=1e6)),
        message=draw(HOSTILE),
        detail=detail,
        expectation=draw(st.sampled_from(["", "PROJ-004", "conformance/test_hostile.py"])),
        expectation_reason=draw(HOSTILE),
        longrepr=draw(HOSTILE),
        blame=draw(st.lists(IDS, max_size=2)),
        request=draw(st.sampled_from(["", '{"op":"x","args":{}}'])),
        reviews=draw(st.lists(st.just(review), max_size=1)),
    )


def test_every_footer_kind_the_harness_writes_is_in_the_schema() -> None:
    footer = schema("record.json")["$defs"]["footer"]["properties"]
    kinds = footer["expectation_problems"]["items"]["properties"]["kind"]["enum"]
    assert tuple(kinds) == PROBLEM_KINDS
    outcomes = schema("record.json")["$defs"]["outcome"]["enum"]
    assert set(outcomes) == {str(o) for o in Outcome}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    kinds=st.lists(st.sampled_from(PROBLEM_KINDS), max_size=4),
    status=st.sampled_from(["complete", "stopped", "interrupted", "aborted"]),
    extra=st.dictionaries(st.sampled_from(["calls", "restarts", "weird"]), JSONISH, max_size=2),
)
def test_whatever_a_hostile_run_records_is_read_back_and_reported(
    tmp_path_factory: Any,
    data: st.DataObject,
    kinds: list[str],
    status: str,
    extra: dict[str, Any],
) -> None:
    path = Path(tmp_path_factory.mktemp("rec")) / "record.jsonl"
    writer = RecordWriter(path)
    writer.header(
        {
            "suite_version": "0",
            "spec_profile": "seed",
            "adapter": {
                "name": data.draw(HOSTILE),
                "capabilities": data.draw(st.lists(HOSTILE, max_size=2)),
                "implementation": {"name": data.draw(HOSTILE), "components": {"a": "1"}},
            },
            "selected": 3,
            "filters": {"requirements": ["*"]},  # rows of the cited ids only: quick
        }
    )
    for index in range(data.draw(st.integers(0, 3))):
        writer.test(data.draw(results(index)))
    writer.footer(
        {
            "status": status,
            "signal": "SIGINT",
            "reason": data.draw(HOSTILE),
            "expectation_problems": [
                {"id": data.draw(IDS), "kind": kind, "message": data.draw(HOSTILE)}
                for kind in kinds
            ],
            **extra,
        }
    )
    writer.close()
    record = load_record(path)  # never record-invalid: the writer conformed every line
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        from dsh_conformance.model import jsstr

        check_line(jsstr.parse(line), f"line {number}")
    judgement = judge(record, incomplete_ok=True)
    report = jsonreport.render(record)
    assert badge.render(report)
    for text in (markdown.render(record), html.render([record])):
        assert judgement.seed.title in text
    assert 'name="verdict.seed"' in junit.render(record)


def test_a_refused_field_becomes_a_visible_suite_problem(tmp_path: Path) -> None:
    path = tmp_path / "record.jsonl"
    writer = RecordWriter(path)
    writer.header({"adapter": {"name": "x"}, "spec_profile": "seed", "selected": 1})
    bad = TestResult(
        "conformance/test_uri.py::t",
        Outcome.PASS,
        ("URI-001",),
        reviews=[{"requirement": "URI-001", "sha256": "not-hex", "text": "t"}],
    )
    writer.test(bad)
    writer.footer({"status": "complete", "expectation_problems": []})
    writer.close()
    record = load_record(path)
    assert record.tests[0].reviews == ()
    (problem,) = record.suite_problems
    assert "reviews/0" in problem["message"]
    judgement = judge(record)
    assert [p.code for p in judgement.problems] == ["suite-problem"]
    assert "suite-problem" in markdown.render(record)
    # a suite problem fails the run, never the verdicts it does not touch
    assert judgement.exit_status == 1
    assert judgement.seed.passed


def test_a_blame_not_cited_record_is_summarised_not_refused(tmp_path: Path) -> None:
    """The record two hosts could not read (issue 37): a blame-not-cited footer."""
    path = tmp_path / "record.jsonl"
    writer = RecordWriter(path)
    writer.header({"adapter": {"name": "x"}, "spec_profile": "seed", "selected": 1})
    writer.test(
        TestResult(
            "conformance/test_retention.py::t",
            Outcome.FAIL,
            ("RET-003",),
            message="boom",
            blame=("RET-004",),
        )
    )
    problem = {
        "id": "conformance/test_retention.py::t",
        "kind": "blame-not-cited",
        "message": "conformance/test_retention.py::t blames RET-004, which it does not cite",
    }
    writer.footer({"status": "complete", "expectation_problems": [problem]})
    writer.close()
    done = CliRunner().invoke(main, ["summary", str(path), "--format", "markdown"])
    assert done.exit_code == 1, done.output
    assert "suite-problem" in done.output
    assert "blames RET-004" in done.output
