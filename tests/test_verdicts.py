"""Blame per check and the two verdicts (D-160, D-161, D-162)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.checks import (
    CheckFailure,
    blamed,
    check,
    expect,
    expect_equal,
    expect_error,
)
from dsh_conformance.cli import main
from dsh_conformance.outcomes import GATES, Outcome
from dsh_conformance.record import RecordWriter, RunRecord, TestResult, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.exitstatus import run_failed
from dsh_conformance.reporting.gate import gate_of
from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.reporting.verdict import verdicts
from dsh_conformance.spec import load_catalog

# A seed MUST, a decision MUST, and a seed SHOULD of the current catalog.
SEED_MUST = "URI-001"
DECISION_MUST = "URI-005"


def _should() -> str:
    catalog = load_catalog().requirements
    return next(r.id for r in catalog.values() if r.verdict == "seed" and r.level == "SHOULD")


def test_catalog_fixtures_have_the_assumed_sources() -> None:
    catalog = load_catalog().requirements
    assert catalog[SEED_MUST].verdict == "seed"
    assert catalog[SEED_MUST].level == "MUST"
    assert catalog[DECISION_MUST].verdict == "profile"


def test_check_blames_exactly_its_requirement() -> None:
    with pytest.raises(AssertionError) as info, check("URI-004", uri="x="):
        assert "=" not in "x="
    assert blamed(info.value) == ("URI-004",)
    assert any("URI-004" in note and 'uri = "x="' in note for note in info.value.__notes__)


def test_the_innermost_check_wins() -> None:
    with pytest.raises(AssertionError) as info, check("URI-001"), check("URI-004"):
        raise AssertionError("inner")
    assert blamed(info.value) == ("URI-004",)


def test_blame_is_found_inside_groups_and_causes() -> None:
    first, second = CheckFailure("a"), CheckFailure("b")
    with pytest.raises(CheckFailure), check("SER-001"):
        raise first
    with pytest.raises(CheckFailure), check("SER-003"):
        raise second
    group = ExceptionGroup("two bugs", [first, second])
    assert set(blamed(group)) == {"SER-001", "SER-003"}
    wrapped = RuntimeError("outer")
    wrapped.__cause__ = first
    assert blamed(wrapped) == ("SER-001",)


def test_expect_helpers_show_expected_and_actual() -> None:
    expect("URI-001", True, "never raised")
    with pytest.raises(CheckFailure) as info:
        expect_equal("URI-002", "b", "a", input="a")
    text = str(info.value)
    assert "[URI-002]" in text
    assert 'expected = "a"' in text
    assert 'actual = "b"' in text
    assert 'input = "a"' in text


def test_expect_error_shows_what_a_wrongly_successful_call_returned() -> None:
    impl = Implementation(ReferenceAdapter(), "reference")
    code = expect_error("URI-005", impl, "uri.decode", {"uri": "nope"})
    assert code == "SESSION_REFERENCE_INVALID_REFERENCE"
    with pytest.raises(CheckFailure) as info:
        expect_error("URI-005", impl, "uri.encode", {"sessionId": "a"})
    assert 'returned = "dsh-session:ImEi"' in str(info.value)
    with pytest.raises(CheckFailure) as wrong:
        expect_error("URI-005", impl, "uri.decode", {"uri": "nope"}, codes={"OTHER"})
    assert 'actual = "SESSION_REFERENCE_INVALID_REFERENCE"' in str(wrong.value)


def _record(path: Path, *tests: TestResult, profile: str = "seed") -> Path:
    writer = RecordWriter(path)
    writer.header(
        {
            "spec_profile": profile,
            "adapter": {"name": "x"},
            "filters": {"requirements": ["URI-*"]},
            "selected": len(tests),
        }
    )
    for test in tests:
        writer.test(test)
    writer.footer({"status": "complete"})
    writer.close()
    return path


def _result(
    name: str, outcome: str, cited: tuple[str, ...], blame: tuple[str, ...] = ()
) -> TestResult:
    return TestResult(f"conformance/test_uri.py::{name}", Outcome(outcome), cited, blame=blame)


def test_a_failed_test_judges_only_what_it_blames(tmp_path: Path) -> None:
    record = load_record(
        _record(
            tmp_path / "r.jsonl",
            _result("t1", "fail", (SEED_MUST, DECISION_MUST), blame=(DECISION_MUST,)),
        )
    )
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows == {SEED_MUST: "inconclusive", DECISION_MUST: "fail"}
    seed, profile = verdicts(record)
    assert seed.passed
    assert not profile.passed
    assert profile.failing == (DECISION_MUST,)


def test_another_passing_test_still_passes_an_unblamed_requirement(tmp_path: Path) -> None:
    record = load_record(
        _record(
            tmp_path / "r.jsonl",
            _result("t1", "fail", (SEED_MUST, DECISION_MUST), blame=(DECISION_MUST,)),
            _result("t2", "pass", (SEED_MUST,)),
        )
    )
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows[SEED_MUST] == "pass"


def test_an_unattributed_failure_blames_every_cited_requirement(tmp_path: Path) -> None:
    record = load_record(
        _record(tmp_path / "r.jsonl", _result("t1", "fail", (SEED_MUST, DECISION_MUST)))
    )
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows == {SEED_MUST: "fail", DECISION_MUST: "fail"}


def test_gates_select_the_verdicts_that_fail_the_run(tmp_path: Path) -> None:
    profile_only = load_record(
        _record(tmp_path / "p.jsonl", _result("t1", "fail", (DECISION_MUST,)))
    )
    should = _should()
    seed_should = load_record(_record(tmp_path / "s.jsonl", _result("t1", "fail", (should,))))
    seed_must = load_record(_record(tmp_path / "m.jsonl", _result("t1", "fail", (SEED_MUST,))))
    expected = {
        # gate: (profile-only failure, seed SHOULD failure, seed MUST failure)
        "seed": (False, False, True),
        "seed-should": (False, True, True),
        "profile": (True, False, True),
        "all": (True, True, True),
    }
    assert set(expected) == set(GATES)
    for gate, (p, s, m) in expected.items():
        assert bool(gate_of(profile_only, gate).unexpected) is p, gate
        assert bool(gate_of(seed_should, gate).unexpected) is s, gate
        assert bool(gate_of(seed_must, gate).unexpected) is m, gate
    with pytest.raises(ValueError, match="unknown gate"):
        gate_of(seed_must, "strict")


def test_a_crash_fails_every_gate(tmp_path: Path) -> None:
    crashed = load_record(_record(tmp_path / "c.jsonl", _result("t1", "crash", (DECISION_MUST,))))
    assert run_failed(crashed, "seed")


def test_every_report_shows_both_verdicts(tmp_path: Path) -> None:
    record = load_record(
        _record(
            tmp_path / "r.jsonl",
            _result("t1", "fail", (SEED_MUST, DECISION_MUST), blame=(DECISION_MUST,)),
        )
    )
    md = markdown.render(record)
    assert "seed conformance" in md
    assert "reference profile" in md
    assert jsonreport.build(record)["verdicts"]["profile"]["failing"] == [DECISION_MUST]
    assert jsonreport.build(record)["verdicts"]["seed"]["passed"] is True
    xml = junit.render(record)
    # the failing test judged only the profile id it blames: no seed MUST was judged
    assert 'name="verdict.seed" value="not judged (0 of ' in xml
    assert f'name="blames" value="{DECISION_MUST}"' in xml
    page = html.render([record])
    assert page.index("seed conformance") < page.index("<h2>Requirements</h2>")
    # a profile failure under --fail-on seed: listed, not counted by the gate
    assert "Fails the gate" not in page
    assert page.index("Other failures (1") < page.index("<h2>Requirements</h2>")


def test_cli_exit_status_follows_fail_on(tmp_path: Path) -> None:
    path = _record(tmp_path / "r.jsonl", _result("t1", "fail", (DECISION_MUST,)))
    runner = CliRunner()
    assert runner.invoke(main, ["summary", str(path)]).exit_code == 0
    assert runner.invoke(main, ["summary", str(path), "--fail-on", "profile"]).exit_code == 1
    bad = runner.invoke(main, ["summary", str(path), "--fail-on", "strict"])
    assert bad.exit_code == 2
    assert "Invalid value for '--fail-on'" in bad.output
    assert "Traceback" not in bad.output


def test_a_failure_names_requirement_input_expected_actual_and_replay(tmp_path: Path) -> None:
    from harness_cli import run_record

    done, record = run_record(
        tmp_path,
        "python:fauxmplementations:padded",
        "--requirement",
        "REF-010",
        "-k",
        "uri-encode-empty",
        "--hypothesis-profile",
        "quick",
    )
    assert done.returncode == 1
    (test,) = [t for t in record.tests if t.outcome is Outcome.FAIL]
    assert test.blame == ("REF-010",)
    assert 'expected "dsh-session:IiI", got "dsh-session:IiI="' in test.message  # JSON
    assert test.failure["checks"][0]["requirement"] == "REF-010"
    replay = test.failure["replay"]
    assert replay.startswith("dsh-conformance run --adapter python:fauxmplementations:padded")
    assert replay.endswith(
        "--test 'conformance/test_cases.py::test_case[foundation:uri-encode-empty]'"
    )
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert 'actual:   "dsh-session:IiI="' in report  # as JSON, before the traceback (D-310)
    assert "dsh-conformance run --adapter python:fauxmplementations:padded" in report


def test_diff_gates_like_summary(tmp_path: Path) -> None:
    """diff regresses on exactly what the same gate fails in summary, newly."""
    base = _record(tmp_path / "base.jsonl", _result("t1", "pass", (_should(),)))
    should = _record(tmp_path / "should.jsonl", _result("t1", "fail", (_should(),)))
    runner = CliRunner()
    assert runner.invoke(main, ["diff", str(base), str(should)]).exit_code == 0
    assert runner.invoke(main, ["summary", str(should)]).exit_code == 0
    for gate in ("seed-should", "all"):
        assert (
            runner.invoke(main, ["diff", str(base), str(should), "--fail-on", gate]).exit_code == 1
        )
        assert runner.invoke(main, ["summary", str(should), "--fail-on", gate]).exit_code == 1
    profile = _record(tmp_path / "profile.jsonl", _result("t1", "fail", (DECISION_MUST,)))
    base2 = _record(tmp_path / "base2.jsonl", _result("t1", "pass", (DECISION_MUST,)))
    assert runner.invoke(main, ["diff", str(base2), str(profile)]).exit_code == 0
    assert (
        runner.invoke(main, ["diff", str(base2), str(profile), "--fail-on", "profile"]).exit_code
        == 1
    )


def test_the_replay_names_a_manifest_only_when_it_is_not_the_built_in_one(tmp_path: Path) -> None:
    """A run of an adapter with a built-in manifest loads it anyway: naming it would put an
    absolute path into site-packages into every replay line."""
    from dsh_conformance.adapters.expectations import builtin_manifest
    from dsh_conformance.reporting.replay import replay_command

    builtin = builtin_manifest("reference")
    assert builtin is not None
    own = tmp_path / "own.toml"
    for adapter, manifest, named in (
        ("reference", str(builtin), False),
        ("upstream", str(builtin), True),  # another adapter's manifest is a choice
        ("reference", str(own), True),
    ):
        header = {"adapter": {"name": adapter}, "expectations": manifest}
        command = replay_command(RunRecord(header, (), None))
        assert ("--expectations" in command) is named, command
