"""The review outcome (issue 25 item 3, D-199): the meaning of a natural-language text is
judged by a person, never by the suite.

A run shows each text beside the note's sentence; a host's manifest records its review
(the text's sha256, who, why), valid until the text changes; a missing review is listed
and never fails a verdict.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.checks import take_reviews, text_sha256
from dsh_conformance.conformance import side_invariants as inv
from dsh_conformance.model.side_framing import FRAMING_TEXT
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.reviews import review_items
from dsh_conformance.reporting.rows import MAY_ONLY, REVIEW, requirement_rows
from dsh_conformance.reporting.verdict import verdicts

SELECTION = ("-k", "test_framing_is_one_plugin_context_at_the_head", "--fail-on", "seed")


def _status(record: RunRecord, rid: str) -> str:
    return next(row.status for row in requirement_rows(record) if row.id == rid)


def _manifest(tmp_path: Path, sha256: str) -> Path:
    path = tmp_path / "reviews.toml"
    path.write_text(
        "[[review]]\n"
        'requirement = "SIDE-007"\n'
        f'sha256 = "{sha256}"\n'
        'by = "reviewer@example.org"\n'
        'why = "says: explain, change nothing, do not continue the task"\n',
        "utf-8",
    )
    return path


def test_a_missing_review_is_listed_and_fails_nothing(tmp_path: Path) -> None:
    """The manifest reviewed another text (the framing before it changed): it does not
    apply, the review is missing, SIDE-007 shows ``review`` and the seed verdict passes."""
    stale = _manifest(tmp_path, text_sha256("an earlier framing"))
    done, record = run_record(tmp_path, "reference", *SELECTION, "--expectations", str(stale))
    complete(record)
    assert done.returncode == 0, done.stdout[-2000:]
    (item,) = review_items(record)
    assert item.requirement == "SIDE-007"
    assert item.text == inv.text_of([{"type": "text", "text": FRAMING_TEXT}])
    assert item.sha256 == text_sha256(item.text)
    assert "explain without mutating or continuing the task" in item.sentence
    assert item.review is None
    assert _status(record, "SIDE-007") == REVIEW
    seed, _profile = verdicts(record)
    assert seed.passed
    report = (tmp_path / "out" / "report.md").read_text("utf-8")
    assert "### Reviews (1, 1 missing)" in report
    assert item.sha256 in report
    assert "explain without mutating or continuing the task" in report
    data = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert data["reviews"][0]["review"] is None
    # The manifest reviewed an earlier text under SIDE-007: every report says it changed.
    earlier = text_sha256("an earlier framing")
    assert item.stale == (earlier,)
    assert data["reviews"][0]["stale"] == [earlier]
    assert f"changed since its review: the manifest reviewed another text (sha256 {earlier})" in (
        report
    )
    assert "reviews missing: 1 (SIDE-007, changed since their review: SIDE-007)" in done.stdout
    html = (tmp_path / "out" / "report.html").read_text("utf-8")
    assert "<h3>Reviews (1, 1 missing)</h3>" in html
    assert "explain without mutating or continuing the task" in html
    assert f"changed since its review: the manifest reviewed another text (sha256 {earlier})" in (
        html
    )
    junit = (tmp_path / "out" / "junit.xml").read_text("utf-8")
    assert f'name="review.SIDE-007" value="missing (sha256 {item.sha256});' in junit


def test_a_recorded_review_applies_to_its_text(tmp_path: Path) -> None:
    sha = text_sha256(inv.text_of([{"type": "text", "text": FRAMING_TEXT}]))
    manifest = _manifest(tmp_path, sha)
    done, record = run_record(tmp_path, "reference", *SELECTION, "--expectations", str(manifest))
    complete(record)
    assert done.returncode == 0, done.stdout[-2000:]
    (item,) = review_items(record)
    assert item.review == {
        "by": "reviewer@example.org",
        "why": "says: explain, change nothing, do not continue the task",
    }
    assert _status(record, "SIDE-007") == "pass"
    # an e-mail address is escaped in Markdown, so GFM makes no link of it (issue 43)
    assert "reviewed by reviewer\\@example.org" in (tmp_path / "out" / "report.md").read_text()
    assert item.stale == ()
    junit = (tmp_path / "out" / "junit.xml").read_text("utf-8")
    assert 'name="review.SIDE-007" value="reviewed by reviewer@example.org: says:' in junit


def test_a_review_never_raises_and_is_taken_once() -> None:
    from dsh_conformance.checks import review

    take_reviews()
    review("SIDE-007", "some framing", hints=["a hint"])
    review("SIDE-007", "some framing", hints=["a hint"])
    (item,) = take_reviews()
    assert item["sha256"] == text_sha256("some framing")
    assert item["hints"] == ["a hint"]
    assert take_reviews() == []
    assert text_sha256("\ud800") != text_sha256("\ufffd")


@pytest.mark.parametrize("rid", ["SIDE-018"])
def test_an_unjudged_may_sentence_cannot_fail_the_seed_verdict(tmp_path: Path, rid: str) -> None:
    """Issue 25 item 4: a MAY of a note nothing judged is shown as such, not as untested."""
    from dsh_conformance.record import TestResult

    record = RunRecord(
        header={"spec_profile": "seed", "filters": {}},
        tests=(TestResult(nodeid="t", outcome="pass", requirements=("SIDE-003",)),),
        footer={"status": "complete"},
    )
    rows = {row.id: row for row in requirement_rows(record)}
    assert rows[rid].level == "MAY"
    assert rows[rid].status == MAY_ONLY
