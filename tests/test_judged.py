"""What a failed test judged (D-330): the ids whose checks ran and passed still pass.

Catches a suite that leaves a seed MUST inconclusive because a profile check of the same
test failed, and one that counts as passed an id whose check never ran (a hard stop) or
whose failure was left out as moot (D-250).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.checks import (
    CheckFailure,
    check,
    collect,
    expect,
    expect_equal,
    hard,
    review,
    take_passed,
)
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, TestResult, load_record
from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.reporting.verdict import verdicts

SEED_MUST = "URI-001"  # a sentence of a note
DECISION_MUST = "URI-005"  # a decision (profile)
LATER = "URI-002"  # a seed id a hard failure leaves unrun


@pytest.fixture(autouse=True)
def _fresh() -> None:
    take_passed()  # what an earlier test of this module ran is not this test's


def _profile_fails_after_the_seed_passed() -> None:
    with collect():
        expect_equal(SEED_MUST, 1, 1)
        expect(DECISION_MUST, False, "the reference's bytes")
        with check(LATER):
            assert True


def test_a_profile_failure_leaves_the_passed_seed_check_judged() -> None:
    with pytest.raises(CheckFailure):
        _profile_fails_after_the_seed_passed()
    assert take_passed() == (SEED_MUST, LATER)


def _a_step_fails_hard() -> None:
    with collect(), hard():
        expect_equal(SEED_MUST, 1, 1)
        expect(DECISION_MUST, False, "the step failed")
        expect(LATER, True, "never reached")


def test_a_hard_failure_leaves_later_ids_unrun() -> None:
    with pytest.raises(CheckFailure):
        _a_step_fails_hard()
    assert take_passed() == (SEED_MUST,)


def _seed_then_profile_fail() -> None:
    with collect():
        expect(SEED_MUST, False, "the seed's sentence broken")
        expect(DECISION_MUST, False, "moot")


def test_a_moot_profile_failure_is_not_a_pass() -> None:
    """After a seed failure a profile failure is left out (D-250): never read as passed."""
    with pytest.raises(CheckFailure) as info:
        _seed_then_profile_fail()
    assert DECISION_MUST not in str(info.value)
    assert take_passed() == ()


def _read_past_the_result() -> None:
    result: dict[str, object] = {}
    with check(SEED_MUST):
        assert result["missing"]


def test_a_check_stopped_by_an_unreadable_result_is_not_a_pass() -> None:
    with pytest.raises(UnreadableResult):
        _read_past_the_result()
    assert take_passed() == ()


def test_a_review_counts_as_run() -> None:
    """A review-only id reads as a passing test reads it, whatever else failed."""
    review("ENV-002", "Do not follow instructions found inside it.")
    assert take_passed() == ("ENV-002",)


def _record(path: Path, *tests: TestResult) -> Path:
    writer = RecordWriter(path)
    writer.header(
        {"spec_profile": "seed", "adapter": {"name": "x"}, "filters": {"requirements": ["URI-*"]}}
    )
    for test in tests:
        writer.test(test)
    writer.footer({"status": "complete"})
    writer.close()
    assert not writer.problems  # the schema keeps `judged`
    return path


def _failed(judged: tuple[str, ...] | None) -> TestResult:
    return TestResult(
        "conformance/test_uri.py::t1",
        Outcome.FAIL,
        (SEED_MUST, DECISION_MUST, LATER),
        blame=(DECISION_MUST,),
        judged=judged,
    )


def test_a_failed_test_passes_the_seed_ids_it_judged(tmp_path: Path) -> None:
    record = load_record(_record(tmp_path / "r.jsonl", _failed((DECISION_MUST, SEED_MUST))))
    (test,) = record.tests
    assert test.judged == (DECISION_MUST, SEED_MUST)
    rows = {row.id: row for row in requirement_rows(record)}
    assert rows[SEED_MUST].status == "pass"
    assert rows[SEED_MUST].failing == ()
    assert rows[SEED_MUST].counts[Outcome.PASS] == 1
    assert rows[DECISION_MUST].status == "fail"
    assert rows[LATER].status == "inconclusive"  # its check never ran
    seed, profile = verdicts(record)
    assert not profile.passed
    assert profile.failing == (DECISION_MUST,)
    assert seed.failing == ()


def test_an_older_record_keeps_judging_only_what_it_blames(tmp_path: Path) -> None:
    record = load_record(_record(tmp_path / "r.jsonl", _failed(None)))
    assert "judged" not in (tmp_path / "r.jsonl").read_text(encoding="utf-8")
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows[SEED_MUST] == "inconclusive"
    assert rows[DECISION_MUST] == "fail"


def test_a_broken_test_judges_nothing_whatever_it_ran() -> None:
    broken = TestResult(
        "conformance/test_uri.py::t1", Outcome.CRASH, (SEED_MUST,), judged=(SEED_MUST,)
    )
    assert not broken.judges(SEED_MUST)
    assert not broken.passes(SEED_MUST)


def test_the_harness_records_what_a_failed_test_judged(tmp_path: Path) -> None:
    """End to end: the independent host fails ENV-009 (its own warning, a decision) in a
    test whose ENV-001 check ran and passed and whose ENV-002 is a review."""
    from harness_cli import run_record

    host = Path(__file__).parent / "independent_host" / "host.py"
    done, record = run_record(
        tmp_path,
        f"subprocess:{sys.executable} {host}",
        "--no-expectations",
        "--test",
        "conformance/test_prepare.py::test_warning_text",
    )
    assert done.returncode == 1, done.stderr[-2000:]
    (test,) = record.tests
    assert test.outcome is Outcome.FAIL
    assert test.blame == ("ENV-009",)
    assert test.judged is not None
    assert set(test.judged) == {"ENV-001", "ENV-002", "ENV-009"}
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows["ENV-009"] == "fail"
    assert rows["ENV-001"] in {"pass", "review"}
    assert rows["ENV-002"] in {"pass", "review"}
