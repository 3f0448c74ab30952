"""Every distinct failing requirement is found, and expectations a property meets or not
(issue 41, D-420, D-421, D-422).

Before: every soft check failure was one ``CheckFailure`` raised from one line, so
Hypothesis (which tells bugs apart by type and raising line) kept one example per test
and reported only what that example broke; which requirement failed was the luck of the
seed.  A manifest that expected a property to fail turned a run whose examples met no
failure into an unexpected pass, so the gate flapped with the seed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, run_args

from dsh_conformance import shrinking
from dsh_conformance.adapters.expectations import Entry, load_manifest, parse_manifest
from dsh_conformance.checks import (
    CheckFailure,
    blamed,
    check,
    collect,
    collecting,
    expect,
    fail,
    fail_all,
    failure_class,
)
from dsh_conformance.harness.expected import settle
from dsh_conformance.harness.write_expectations import widened
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import load_record
from dsh_conformance.reporting.gate import gate_of

EVERY = settings(database=None, derandomize=True, max_examples=200, phases=tuple(Phase))


def test_a_failure_is_of_its_requirements_class() -> None:
    assert type(fail("URI-001", "x")) is failure_class(("URI-001",))
    assert type(fail("URI-001", "y")) is type(fail("URI-001", "x"))  # cached
    assert type(fail("URI-002", "x")) is not type(fail("URI-001", "x"))
    assert type(fail_all(["URI-001", "URI-002"], "x")) is failure_class(("URI-001", "URI-002"))
    assert type(fail("URI-001", "x")).__name__ == "CheckFailure"  # reports read no class


def test_an_assertion_inside_check_takes_its_requirements_class() -> None:
    with pytest.raises(CheckFailure) as hard, check("URI-004", uri="x="):
        assert "=" not in "x=", "padded"
    assert type(hard.value) is failure_class(("URI-004",))
    assert blamed(hard.value) == ("URI-004",)
    assert str(hard.value).startswith("padded")
    assert any('uri = "x="' in note for note in hard.value.__notes__)

    def two_checks() -> None:
        with collect():
            with check("URI-004"):
                raise AssertionError("first")
            with check("URI-005"):
                raise AssertionError("second")

    with pytest.raises(ExceptionGroup) as soft:
        two_checks()
    kinds = [type(e) for e in soft.value.exceptions]
    assert kinds == [failure_class(("URI-004",)), failure_class(("URI-005",))]


def _found(test: Callable[[], None]) -> tuple[str, ...]:
    """The requirements the Hypothesis test *test* blames when it fails."""
    try:
        test()
    except (AssertionError, ExceptionGroup) as failed:  # one failure, else a group of them
        return tuple(sorted(blamed(failed)))
    raise AssertionError("the property found no failure")


def test_hypothesis_keeps_one_failure_per_requirement() -> None:
    """Two requirements broken by different examples: both are reported, each shrunk."""

    @EVERY
    @given(st.integers(0, 1000))
    @collecting
    def prop(x: int) -> None:
        expect("URI-001", x % 3 != 1, "one")
        expect("URI-002", x % 3 != 2, "two")

    assert _found(prop) == ("URI-001", "URI-002")


def test_failing_explicit_examples_are_kept_one_per_requirement() -> None:
    """Hypothesis keeps one failing explicit example per origin: before, the fixed
    examples of two requirements were one origin and only the simplest was reported."""
    from hypothesis import example

    @EVERY
    @given(st.integers(0, 1000))
    @example(1)
    @example(2)
    @collecting
    def prop(x: int) -> None:
        expect("URI-001", x != 1, "one")
        expect("URI-002", x != 2, "two")

    assert _found(prop) == ("URI-001", "URI-002")


def test_a_capped_shrink_still_reports_every_requirement_it_saw_fail() -> None:
    """D-312's cap ends shrinking early; every failure found by then is still reported."""
    calls = 0

    @EVERY
    @given(st.lists(st.integers(0, 10**6), min_size=5))
    @collecting
    def prop(xs: list[int]) -> None:
        nonlocal calls
        calls += 1
        expect("URI-001", sum(xs) % 3 != 0, "one")
        expect("URI-002", sum(xs) % 3 != 1, "two")
        expect("URI-003", sum(xs) % 3 != 2, "three")

    assert _found(prop) == ("URI-001", "URI-002", "URI-003")
    uncapped, calls = calls, 0
    assert shrinking.cap_shrinking(0)
    try:
        assert _found(prop) == ("URI-001", "URI-002", "URI-003")
    finally:
        shrinking.cap_shrinking()
    assert calls < uncapped  # the cap did cut the shrinking short


def test_settle_under_an_entry() -> None:
    prop = Entry("conformance/test_x.py::test_p", "xfail", "r", blames=("PROJ-004",))
    named = settle(prop, Outcome.FAIL, ("PROJ-004",), allowed=prop.blames, property_test=True)
    assert (named.outcome, named.detail) == (Outcome.XFAIL, "fail")
    stray = settle(
        prop, Outcome.FAIL, ("PROJ-004", "PROJ-001"), allowed=prop.blames, property_test=True
    )
    assert stray.outcome is Outcome.FAIL
    assert stray.expected_blame == ("PROJ-004",)
    assert "not PROJ-001" in stray.note
    crash = settle(prop, Outcome.CRASH, (), allowed=prop.blames, property_test=True)
    assert crash.outcome is Outcome.XFAIL  # an entry expects a failure of any kind
    missed = settle(prop, Outcome.PASS, (), allowed=prop.blames, property_test=True)
    assert (missed.outcome, missed.not_reproduced) == (Outcome.PASS, True)
    assert "not reproduced" in missed.note
    fixed = settle(prop, Outcome.PASS, (), allowed=prop.blames, property_test=False)
    assert fixed.outcome is Outcome.XPASS
    strict = Entry(prop.id, "xfail", "r", strict=True)
    assert settle(strict, Outcome.PASS, (), property_test=True).outcome is Outcome.XPASS
    anything = Entry(prop.id, "xfail", "r")
    assert settle(anything, Outcome.FAIL, ("URI-001",)).outcome is Outcome.XFAIL


def test_the_manifest_names_what_each_test_may_blame() -> None:
    manifest = parse_manifest(
        {
            "expect": [
                {"id": "URI-004", "status": "xfail", "reason": "r"},
                {"id": "URI-005", "status": "xfail", "reason": "r", "blames": ["URI-002"]},
                {"id": "conformance/test_a.py", "status": "xfail", "reason": "r"},
                {
                    "id": "conformance/test_b.py",
                    "status": "xfail",
                    "reason": "r",
                    "blames": ["URI-001"],
                    "strict": True,
                },
            ]
        }
    )
    assert manifest.expected_blame("conformance/test_c.py::t", ["URI-005"]) == (
        "URI-005",
        "URI-002",
    )
    assert manifest.expected_blame("conformance/test_c.py::t", ["URI-004", "URI-005"]) == ()
    assert manifest.expected_blame("conformance/test_b.py::t", ["URI-005"]) == (
        "URI-005",
        "URI-002",
        "URI-001",
    )
    assert manifest.expected_blame("conformance/test_a.py::t", ["URI-005"]) == ()
    entry = manifest.entries[3]
    assert entry.to_json()["blames"] == ["URI-001"]
    assert entry.to_json()["strict"] is True
    grown = widened(entry, ("URI-001", "URI-003"), entry.blames)
    assert grown.blames == ("URI-001", "URI-003")
    assert widened(manifest.entries[2], ("URI-003",), ()) == manifest.entries[2]


def test_an_unknown_id_in_blames_is_a_typed_error() -> None:
    from dsh_conformance.errors import ManifestError

    data = {"expect": [{"id": "URI-004", "status": "xfail", "reason": "r", "blames": ["X-999"]}]}
    with pytest.raises(ManifestError) as caught:
        parse_manifest(data, known_requirements=["URI-004"])
    assert caught.value.code == "unknown-requirement"
    assert "blames of URI-004" in str(caught.value)


ROUND_TRIP = "conformance/test_uri.py::test_every_js_string_round_trips"
PADDED_TEST = "conformance/test_uri.py::test_encode_is_scheme_plus_base64url_of_json_stringify"
QUICK = ("--requirement", "URI-*", "--seed", "7", "--hypothesis-profile", "quick")


def _manifest(path: Path, *entries: str) -> Path:
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def test_a_property_that_meets_no_failure_is_not_reproduced_not_an_unexpected_pass(
    tmp_path: Path,
) -> None:
    manifest = _manifest(
        tmp_path / "m.toml",
        f'[[expect]]\nid = "{ROUND_TRIP}"\nstatus = "xfail"\nreason = "only on some ids"\n'
        'blames = ["URI-002"]\n',
    )
    out = tmp_path / "out"
    done = cli(*run_args("reference", out, *QUICK, "--expectations", str(manifest)))
    assert done.returncode == 0, done.stdout + done.stderr
    test = load_record(out / "record.jsonl").by_nodeid()[ROUND_TRIP]
    assert test.outcome is Outcome.PASS  # the verdict reads what the implementation did
    assert test.not_reproduced
    assert test.message.startswith("expected failure not reproduced")
    gate = json.loads((out / "report.json").read_text(encoding="utf-8"))["gate"]
    assert gate["passed"]
    assert [t["nodeid"] for t in gate["not_reproduced"]] == [ROUND_TRIP]
    assert "1 expected failures not reproduced" in gate["label"]
    # every report lists it with the expected results, through the one verdict model
    said = "pass (expected failure not reproduced)"
    md = (out / "report.md").read_text(encoding="utf-8")
    assert said in md.split("### Expected", 1)[1]
    assert "[1 expected](#expected)" in md
    assert said in (out / "report.html").read_text(encoding="utf-8")
    junit = (out / "junit.xml").read_text(encoding="utf-8")
    assert f'<property name="expected" value="{said}" />' in junit
    assert "1 expected failures not reproduced" in done.stdout + done.stderr


def test_a_failure_blaming_an_id_the_entry_does_not_name_is_unexpected(tmp_path: Path) -> None:
    manifest = _manifest(
        tmp_path / "m.toml",
        f'[[expect]]\nid = "{PADDED_TEST}"\nstatus = "xfail"\nreason = "r"\nblames = ["URI-002"]\n',
    )
    adapter = "python:fauxmplementations:padded"
    out = tmp_path / "out"
    select = (*QUICK, "-k", "test_encode_is_scheme", "--expectations", str(manifest))
    done = cli(*run_args(adapter, out, *select, "--fail-on", "profile"))
    assert done.returncode == 1, done.stdout + done.stderr
    test = load_record(out / "record.jsonl").by_nodeid()[PADDED_TEST]
    assert test.outcome is Outcome.FAIL
    assert test.blame == ("URI-004",)
    assert test.expectation_blames == ("URI-002",)
    assert "not URI-004" in test.message
    gate = gate_of(load_record(out / "record.jsonl"))  # gated as the run was: profile
    assert [t.nodeid for t in gate.unexpected] == [PADDED_TEST]
    # URI-004 is a profile MUST (D-5): the seed gate does not count it.
    seed = cli(*run_args(adapter, tmp_path / "seed", *select, "--fail-on", "seed"))
    assert seed.returncode == 0, seed.stdout + seed.stderr


def test_write_expectations_names_what_each_failure_blames(tmp_path: Path) -> None:
    written = tmp_path / "w.toml"
    adapter = "python:fauxmplementations:padded"
    cli(*run_args(adapter, tmp_path / "a", *QUICK, "--write-expectations", str(written)))
    entry = {e.id: e for e in load_manifest(written).entries}[PADDED_TEST]
    assert entry.blames == ("URI-004",)
