"""Each room of the harness on its own, without a pytest session (docs/architecture.md).

The end-to-end behaviour is held by the other test_harness_* files; these say, per
room, which wrong harness each catches: a selection that runs a deselected test, an
outcome classified from the wrong phase, a manifest applied to a pass, a blame that
names what the test does not cite, a record line that keeps a pass's traceback.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs

from dsh_conformance.adapters.contract import AdapterFault, UnreadableResult
from dsh_conformance.adapters.expectations import Entry, Manifest
from dsh_conformance.harness import blame, classify, evidence, expected, recording, selection
from dsh_conformance.harness import write_expectations as writing
from dsh_conformance.harness.evidence import Evidence
from dsh_conformance.harness.selection import Earlier, ItemMeta
from dsh_conformance.options import RunOptions
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import TestResult
from dsh_conformance.spec import load_catalog

URI_TEST = "conformance/test_uri.py::test_x[a]"
META = ItemMeta(URI_TEST, ("URI-001", "URI-004"), ("uri",), None)


def report(**kw: Any) -> Any:
    base = {"passed": False, "skipped": False, "failed": False, "longrepr": None}
    return SimpleNamespace(**{**base, **kw})


def result(outcome: Outcome, nodeid: str = URI_TEST, **kw: Any) -> TestResult:
    return TestResult(nodeid=nodeid, outcome=outcome, requirements=("URI-001",), **kw)


# --- selection ----------------------------------------------------------------------------


def test_selection_keeps_the_profile_and_filters_of_the_options() -> None:
    catalog = load_catalog().requirements
    seed = RunOptions()
    assert selection.wanted(("URI-001",), ("uri",), seed, catalog)
    assert not selection.wanted(("URI-001",), ("uri",), RunOptions(requirements=["SER-*"]), catalog)
    assert selection.wanted(("URI-001",), ("uri",), RunOptions(requirements=["URI-00?"]), catalog)
    assert not selection.wanted(("URI-001",), ("uri",), RunOptions(capabilities=["side"]), catalog)
    release_only = next(r for r, req in catalog.items() if req.profiles == ("release",))
    assert not selection.wanted((release_only,), (), seed, catalog)


def test_an_earlier_record_leaves_out_what_it_carries_and_what_did_not_fail() -> None:
    carried = Earlier(carried={"a": result(Outcome.PASS, "a")})
    assert carried.done("a")
    assert not carried.done("b")
    rerun = Earlier(rerun=frozenset({"b"}))
    assert rerun.done("a")
    assert not rerun.done("b")
    assert not Earlier().done("a")


# --- classify -----------------------------------------------------------------------------


def test_the_outcome_comes_from_the_phase_and_the_guard_s_fault() -> None:
    assert classify.outcome_of(report(passed=True), None, None) is Outcome.PASS
    skipped = report(skipped=True, longrepr=("f", 1, "Skipped: unsupported: uri"))
    assert classify.outcome_of(skipped, None, None) is Outcome.UNSUPPORTED
    assert classify.outcome_of(report(skipped=True, longrepr=("f", 1, "x")), None, None) is (
        Outcome.SKIPPED
    )
    assert classify.outcome_of(report(), AssertionError("x"), None) is Outcome.FAIL
    fault = AdapterFault("timeout", "no reply")
    # Hypothesis wrapped the fault: the guard's first fault still names the timeout.
    assert classify.outcome_of(report(), AssertionError("flaky"), fault) is Outcome.TIMEOUT
    assert classify.outcome_of(report(), None, None) is Outcome.FAIL


def test_a_failed_teardown_turns_only_a_pass_into_an_error() -> None:
    assert classify.teardown_outcome(report(failed=True), Outcome.PASS) is Outcome.ERROR
    assert classify.teardown_outcome(report(failed=True), None) is Outcome.ERROR
    assert classify.teardown_outcome(report(failed=True), Outcome.FAIL) is Outcome.FAIL
    assert classify.teardown_outcome(report(), Outcome.PASS) is Outcome.PASS


# --- evidence -----------------------------------------------------------------------------


def test_a_fault_is_told_by_its_request_in_flight_not_by_the_exception() -> None:
    state = Evidence(longrepr="FlakyFailure …")
    fault = AdapterFault("crash", "exit 3")
    fault.dsh_request = {"op": "uri.encode", "args": {"sessionId": "x"}}  # type: ignore[attr-defined]
    evidence.faulted(state, fault, None)
    assert state.message.startswith('crash (request in flight: {"op":"uri.encode"')
    assert state.message.endswith("exit 3")
    assert state.failure["checks"] == []
    assert '"sessionId":"x"' in state.request


def test_an_unreadable_result_keeps_the_op_and_why_and_no_checks() -> None:
    state = Evidence(failure={"checks": [{"requirement": "URI-001"}]})
    evidence.unreadable(state, UnreadableResult("uri.decode", {"uri": "x"}, 7, "not a string"))
    assert state.failure["checks"] == []
    assert state.failure["message"] == state.message
    assert "not a string" in state.message


def test_messages_are_cut_to_their_limit() -> None:
    assert evidence.short("abcdef", 4) == "abc…"
    assert evidence.short("abc", 4) == "abc"


# --- blame --------------------------------------------------------------------------------


def test_a_failure_outside_any_check_blames_every_cited_requirement() -> None:
    ids, problems = blame.blame(AssertionError("plain"), META)
    assert ids == META.requirements
    assert problems == []


def test_a_blamed_id_the_test_does_not_cite_is_a_problem_of_the_suite() -> None:
    from dsh_conformance import checks

    failure = checks.CheckFailure("[SER-001] x")
    checks.blame(failure, "SER-001")
    ids, problems = blame.blame(failure, META)
    assert ids == ("SER-001",)
    assert [p["kind"] for p in problems] == ["blame-not-cited"]


def test_a_failed_test_judges_what_it_blames_and_what_passed_of_what_it_cites() -> None:
    judged = blame.judged(META, Outcome.FAIL, "", ("URI-004",), ("URI-001", "SER-001"))
    assert judged == ("URI-004", "URI-001")
    assert blame.judged(META, Outcome.PASS, "", (), ("URI-001",)) is None
    assert blame.judged(META, Outcome.CRASH, "", (), ("URI-001",)) is None  # D-212


def test_the_replay_command_names_the_run_s_adapter_seed_and_test() -> None:
    options = RunOptions(adapter="subprocess:node a.mjs", seed=7, max_examples=3)
    command = blame.replay(options, URI_TEST)
    assert command.startswith("dsh-conformance run --adapter 'subprocess:node a.mjs' --seed 7")
    assert "--max-examples 3 --spec-profile seed --test 'conformance/test_uri.py::test_x[a]'" in (
        command
    )


# --- expected -----------------------------------------------------------------------------

XFAIL = Entry(id=URI_TEST, status="xfail", reason="known")
REQ_XFAIL = Entry(id="URI-001", status="xfail", reason="all of it")


def test_an_expected_failure_becomes_xfail_and_keeps_its_raw_outcome() -> None:
    state = Evidence()
    seen = report(outcome="failed")
    assert expected.apply(XFAIL, Outcome.CRASH, seen, state) is Outcome.XFAIL
    assert state.detail == "crash"
    assert seen.outcome == "skipped"


def test_a_test_entry_s_pass_is_an_xpass_but_a_requirement_entry_s_pass_is_a_pass() -> None:
    state = Evidence()
    assert expected.apply(XFAIL, Outcome.PASS, report(), state) is Outcome.XPASS
    assert "unexpected pass" in state.message
    assert expected.apply(REQ_XFAIL, Outcome.PASS, report(), Evidence()) is Outcome.PASS
    assert expected.apply(None, Outcome.FAIL, report(), Evidence()) is Outcome.FAIL


def test_stale_and_unexpectedly_passing_entries_in_manifest_order() -> None:
    stale = Entry(id="conformance/test_gone.py::test_y", status="xfail", reason="gone")
    manifest = Manifest((stale, REQ_XFAIL))
    tally = expected.Tally(manifest)
    assert tally.entry_of(URI_TEST, ("URI-001",)) == REQ_XFAIL
    found = expected.problems(manifest, [result(Outcome.PASS)], tally.matched)
    assert [(p["id"], p["kind"]) for p in found] == [
        (stale.id, "stale"),
        ("URI-001", "unexpected-pass"),
    ]
    assert expected.problems(manifest, [result(Outcome.XFAIL, detail="fail")], None) == []
    # Without a full collection nothing is stale (a -r run sees a part of the suite).
    assert expected.problems(manifest, [result(Outcome.UNSUPPORTED)], None) == []


def test_an_unsupported_entry_skips_with_its_reason() -> None:
    entry = Entry(id="URI-001", status="unsupported", reason="no uri")
    assert expected.unsupported(entry) == "unsupported: no uri (expectation URI-001)"
    assert expected.unsupported(XFAIL) is None


def test_a_property_s_missed_failure_is_not_reproduced_and_a_stray_blame_unexpected() -> None:
    """D-421, D-422: the entry names what a failure may blame; a property that met no
    failure passed, said so."""
    state = Evidence()
    outcome = expected.apply(XFAIL, Outcome.PASS, report(), state, property_test=True)
    assert (outcome, state.not_reproduced) == (Outcome.PASS, True)
    assert state.message.startswith("expected failure not reproduced")
    state = Evidence(blame=("URI-001", "URI-004"), message="[URI-004] padded")
    seen = report()
    outcome = expected.apply(XFAIL, Outcome.FAIL, seen, state, allowed=("URI-001",))
    assert (outcome, state.expected_blame) == (Outcome.FAIL, ("URI-001",))
    assert not hasattr(seen, "wasxfail")  # pytest shows it failed, as it is
    assert state.message.splitlines() == [
        f"unexpected failure: {XFAIL.id} expects only URI-001 to fail here, not URI-004",
        "[URI-004] padded",
    ]


# --- recording ----------------------------------------------------------------------------


def test_a_pass_keeps_no_failure_evidence_and_a_failure_keeps_all_of_it() -> None:
    state = Evidence(outcome=Outcome.PASS, longrepr="tb", blame=("URI-001",), request='{"a":1}')
    line = recording.result_of(META, state, (), None)
    assert (line.longrepr, line.blame, line.request) == ("", (), "")
    failed = recording.result_of(META, attrs.evolve(state, outcome=Outcome.FAIL), (), ("URI-001",))
    assert (failed.longrepr, failed.blame, failed.judged) == ("tb", ("URI-001",), ("URI-001",))


def test_the_header_records_the_options_a_replay_needs() -> None:
    options = RunOptions(seed=9, requirements=["URI-*"], tests=[URI_TEST], resume="r.jsonl")
    head = recording.header(options, {"name": "reference"}, None, 3, 2)
    assert head["hypothesis"]["seed"] == 9
    assert head["filters"] == {
        "requirements": ["URI-*"],
        "capabilities": [],
        "keyword": "",
        "tests": [URI_TEST],
    }
    assert (head["selected"], head["resumed"]) == (5, 2)
    assert "rerun_failed" not in head


# --- write_expectations -------------------------------------------------------------------


def test_written_entries_keep_the_manifest_s_own_and_add_each_new_failure() -> None:
    kept = Entry(id="conformance/test_uri.py::test_old", status="xfail", reason="ours")
    manifest = Manifest((kept,))
    results = [
        result(Outcome.XFAIL, kept.id, detail="fail", expectation=kept.id),
        result(Outcome.FAIL, URI_TEST, message="[URI-001] wrong"),
        result(Outcome.PASS, "conformance/test_uri.py::test_fine"),
    ]
    found = writing.entries(manifest, results)
    assert [e.id for e in found] == [kept.id, URI_TEST]
    assert found[0] is kept
    assert found[1].reason.startswith("fail: ")


def test_a_long_reason_is_cut_at_a_word() -> None:
    assert writing.words("alpha beta gamma", 12) == "alpha beta…"
    assert writing.words("short", 12) == "short"


def test_the_manifest_is_written_where_asked(tmp_path: Path) -> None:
    target = tmp_path / "new" / "m.toml"
    writing.write(target, None, [result(Outcome.FAIL)], "reference")
    assert URI_TEST in target.read_text(encoding="utf-8")


def test_a_reason_names_the_outcome_once() -> None:
    """Catches ``protocol: protocol: the result of …`` (issue 43)."""
    text = "protocol: the result of uri.decode cannot be read: not a string"
    unreadable = result(Outcome.PROTOCOL, message=text, failure={"checks": [], "message": text})
    assert writing.reason(unreadable) == text
    crash = "crash (request in flight: {}): exit 3"
    crashed = result(Outcome.XFAIL, detail="crash", failure={"checks": [], "message": crash})
    assert writing.reason(crashed) == crash
    failed = result(Outcome.FAIL, message="[URI-001] wrong")
    assert writing.reason(failed) == "fail: [URI-001] wrong"
