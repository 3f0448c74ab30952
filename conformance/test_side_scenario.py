"""SIDE-*: side sessions on an implementation's own loop (capability side.scenario).

Each test runs whole side-session programs (conformance/side_scenario_programs.py: a
parent, a fork, the child's turns, handback requests and merge-backs, hand-picked and
generated) with ``side.scenario.run`` and checks one sentence of seed 004 on what a host can
observe -- both logs, both sessions' model requests, what it saw around each action --
with conformance/side_scenario_checks.py, independently of the reference model and of the
micro-step ``agent`` capability.  A failure is shrunk to a minimal program and printed as
one replayable ``side.scenario.run`` line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import example, given, note

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect, expect_equal, review
from dsh_conformance.conformance import own_records, side_by_side
from dsh_conformance.conformance import side_scenario_checks as checks
from dsh_conformance.conformance.side_invariants import framing_meaning_problems
from dsh_conformance.conformance.side_scenario_programs import (
    EXAMPLE_PLANS,
    Plan,
    build,
    plans,
    replayable,
)

pytestmark = pytest.mark.capability("side.scenario")

Check = Callable[[dict[str, Any], dict[str, Any]], object]


def run(impl: Implementation, script: dict[str, Any]) -> dict[str, Any]:
    note(replayable(script))
    result: dict[str, Any] = own_records.side_outcome(impl.call("side.scenario.run", **script))
    return result


def holds(requirement: str, impl: Implementation, plan: Plan, rule: Check) -> object:
    """Run *plan*'s program and *rule* on its outcome, blaming *requirement* for a broken
    sentence only: an outcome the rule cannot read (a missing field) blames nothing, it is
    a protocol problem."""
    script = build(plan)
    result = run(impl, script)
    try:
        return rule(script, result)
    except AssertionError:
        with check(requirement, script=replayable(script)):
            raise


def with_examples(test: Callable[..., None]) -> Callable[..., None]:
    for plan in EXAMPLE_PLANS:
        test = example(plan=plan)(test)
    return test


@pytest.mark.req("SIDE-003")
@given(plan=plans)
@with_examples
def test_a_side_session_is_a_live_framed_session_of_its_own(
    impl: Implementation, plan: Plan
) -> None:
    holds("SIDE-003", impl, plan, checks.side_session_is_live_and_its_own)


@pytest.mark.req("SIDE-004")
@given(plan=plans)
@with_examples
def test_the_child_starts_with_a_completed_turn_prefix(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-004", impl, plan, checks.child_seed_is_a_completed_turn_prefix)


@pytest.mark.req("SIDE-005")
@given(plan=plans)
@with_examples
def test_the_child_header_stamps_parent_and_seed_length(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-005", impl, plan, checks.child_header_stamps_lineage)


@pytest.mark.req("SIDE-006")
@given(plan=plans)
@with_examples
def test_the_child_is_an_ordinary_agent(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-006", impl, plan, checks.fork_composes_an_ordinary_agent)


@pytest.mark.req("SIDE-007")
@given(plan=plans)
@with_examples
def test_one_plugin_context_frames_the_child(impl: Implementation, plan: Plan) -> None:
    text = holds("SIDE-007", impl, plan, checks.framing_is_one_plugin_context)
    # what the framing tells the child is meaning: a person's review, never pass/fail (D-199)
    assert isinstance(text, str)
    review("SIDE-007", text, hints=framing_meaning_problems(text))


@pytest.mark.req("SIDE-008")
@given(plan=plans)
@with_examples
def test_the_child_system_prompt_is_byte_identical(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-008", impl, plan, checks.system_prompt_is_the_parents)


@pytest.mark.req("SIDE-009")
@given(plan=plans)
@with_examples
def test_a_handback_is_asked_for_then_injected(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-009", impl, plan, checks.handback_is_asked_then_injected)


@pytest.mark.req("SIDE-010", "SIDE-090")
@given(plan=plans)
@with_examples
def test_the_next_parent_request_sees_the_merge(impl: Implementation, plan: Plan) -> None:
    script = build(plan)
    result = run(impl, script)
    try:
        checks.next_parent_request_sees_it(script, result)
    except AssertionError:
        with check("SIDE-010", script=replayable(script)):
            raise
    else:
        expect("SIDE-010", True, "")  # judged: a profile failure below leaves it passed
    # the reference's replay, one request per step/start byte for byte (profile, D-447)
    for problem in checks.byte_replay_problems(script, result):
        expect("SIDE-090", False, problem, script=replayable(script))


@pytest.mark.req("SIDE-015")
@given(plan=plans)
@with_examples
def test_the_child_outlives_the_parents_turn(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-015", impl, plan, checks.child_outlives_the_parent)


@pytest.mark.req("SIDE-017")
@given(plan=plans)
@with_examples
def test_the_framing_never_changes_the_system_prompt(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-017", impl, plan, checks.framing_stays_out_of_the_system_prompt)


@pytest.mark.req("SIDE-019")
@given(plan=plans)
@with_examples
def test_no_sidechat_event_types(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-019", impl, plan, checks.no_sidechat_events)


@pytest.mark.req("SIDE-020")
@given(plan=plans)
@with_examples
def test_forking_leaves_the_source_untouched(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-020", impl, plan, checks.fork_leaves_the_source_untouched)


@pytest.mark.req("SIDE-024")
@given(plan=plans)
@with_examples
def test_the_framing_heads_the_appended_history(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-024", impl, plan, checks.framing_heads_the_appended_history)


@pytest.mark.req("SIDE-025")
@given(plan=plans)
@with_examples
def test_a_merge_is_one_capped_sidechat_context(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-025", impl, plan, checks.merge_is_one_capped_sidechat_context)


@pytest.mark.req("SIDE-026")
@given(plan=plans)
@with_examples
def test_parent_and_child_have_no_cross_talk(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-026", impl, plan, checks.no_cross_talk)


@pytest.mark.req("SIDE-029")
@given(plan=plans.filter(lambda p: p.compacted))
@example(plan=Plan(compacted=True, fork="in-flight"))
@example(plan=Plan(compacted=True, turns_before=2, child_turns=2))
def test_a_compacted_source_forks_its_compacted_view(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-029", impl, plan, checks.compacted_source_forks_its_view)


@pytest.mark.req("SIDE-031")
@given(plan=plans)
@with_examples
def test_every_merge_is_capped_and_none_rewrites_another(impl: Implementation, plan: Plan) -> None:
    holds("SIDE-031", impl, plan, checks.every_merge_is_capped_and_kept)


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """*result* without event times, what the host saw around each step (its own hooks'
    view) and error messages (REF-008)."""
    out: dict[str, Any] = {"steps": []}
    for name in ("parent", "child"):
        if name in result:
            session = result[name]
            events = [{**e, "time": 0} for e in session["log"]["events"]]
            log = {**session["log"], "events": events}
            out[name] = {**session, "log": log}
    for outcome in result["steps"]:
        kept: dict[str, Any] = {"fired": outcome["fired"]}
        if "error" in outcome:
            kept["error"] = outcome["error"]["code"]
        out["steps"].append(kept)
    return out


@pytest.mark.req("REF-008")
@pytest.mark.differential
@given(plan=plans)
@with_examples
def test_the_reference_model_agrees(
    impl: Implementation, oracle: Implementation, plan: Plan
) -> None:
    """Reference-identity check (reference profile): the same program gives the reference
    model's logs, requests, statuses and step outcomes byte for byte, event times aside.
    A host with side sessions of its own is not expected to pass it; no seed verdict
    depends on it."""
    script = build(plan)
    note(replayable(script))
    answers = side_by_side.both(impl, oracle, "side.scenario.run", script)
    got, want = map(comparable, answers)  # as returned (D-444)
    for key in ("parent", "child", "steps"):
        expect_equal("REF-008", got.get(key), want.get(key), what=key, script=replayable(script))
