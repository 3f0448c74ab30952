"""Message ownership on an implementation's own loop: generated scenarios (capability scenario).

Each test generates whole scenario scripts (conformance/scenario_programs.py), runs them
with ``scenario.run`` and checks one invariant of seed 000 on what a host can observe
(conformance/scenario_oracle.py), independently of the reference model.  A failure is
shrunk to a minimal script and printed as one replayable ``scenario.run`` line.  The
comparison with the reference model is a separate reference-identity test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, note

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import expect_equal
from dsh_conformance.conformance import own_records, side_by_side
from dsh_conformance.conformance import scenario_observed as seen
from dsh_conformance.conformance import scenario_oracle as oracle_checks
from dsh_conformance.conformance.scenario_oracle import PROMPT_EVENTS, records
from dsh_conformance.conformance.scenario_programs import (
    AGENT_ID,
    replayable,
    scripts,
    with_examples,
)

pytestmark = pytest.mark.capability("scenario")


def run(impl: Implementation, script: dict[str, Any]) -> dict[str, Any]:
    note(replayable(script))
    result: dict[str, Any] = own_records.scenario_outcome(impl.call("scenario.run", **script))
    return result


def holds(script: dict[str, Any], check: Callable[..., None], *args: Any) -> None:
    """Run *check*; on failure name the minimal script that breaks it."""
    try:
        check(*args)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{replayable(script)}") from None


@pytest.mark.req("ENV-053")
@given(script=scripts())
@with_examples
def test_exactly_one_delimiter_after_all_prefix_blocks(
    impl: Implementation, script: dict[str, Any]
) -> None:
    events = run(impl, script)["log"]["events"]
    holds(script, oracle_checks.one_delimiter_after_all_prefix_blocks, events)


@pytest.mark.req("ENV-051", "ENV-054")
@given(script=scripts())
@with_examples
def test_the_envelope_shows_the_direct_prompt(impl: Implementation, script: dict[str, Any]) -> None:
    events = run(impl, script)["log"]["events"]
    holds(script, oracle_checks.envelope_shows_the_direct_prompt, events)


@pytest.mark.req("ENV-051")
@given(script=scripts())
@with_examples
def test_the_envelope_stays_hidden_from_the_model(
    impl: Implementation, script: dict[str, Any]
) -> None:
    """Issue 36 item 7: no captured request holds the envelope, and the display holds
    neither the snapshot nor the delimiter -- on the host's own loop."""
    holds(script, oracle_checks.envelope_hidden_from_the_model, run(impl, script))


@pytest.mark.req("ENV-058")
@given(script=scripts())
@with_examples
def test_replay_equals_each_captured_request(impl: Implementation, script: dict[str, Any]) -> None:
    result = run(impl, script)
    holds(script, oracle_checks.replay_equals_each_request, result, AGENT_ID)


@pytest.mark.req("INBOX-021")
@given(script=scripts())
@with_examples
def test_no_context_without_its_message(impl: Implementation, script: dict[str, Any]) -> None:
    """Cancel, disposal, terminal discard and failures drop a message and its contexts
    together: no context of a record is written unless right after its own prompt event."""
    result = run(impl, script)
    events = result["log"]["events"]
    holds(script, oracle_checks.no_context_without_its_message, events, records(script, result))


@pytest.mark.req("INBOX-010")
@given(script=scripts())
@with_examples
def test_a_message_and_its_contexts_share_fate(
    impl: Implementation, script: dict[str, Any]
) -> None:
    """An admitted queued message is written with every context attached to it."""
    result = run(impl, script)
    events, found = result["log"]["events"], records(script, result)
    holds(script, oracle_checks.contexts_travel_with_their_message, events, found)


@pytest.mark.req("ENV-055", "ENV-056")
@given(script=scripts())
@with_examples
def test_separate_contexts_follow_their_own_prompt(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    events, found = result["log"]["events"], records(script, result)
    check = oracle_checks.separate_contexts_follow_their_prompt
    holds(script, check, events, found, PROMPT_EVENTS, False)


@pytest.mark.req("ENV-050", "ENV-059")
@given(script=scripts())
@with_examples
def test_prefix_contexts_bake_into_one_prompt_event(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    events, found = result["log"]["events"], records(script, result)
    check = oracle_checks.prefix_contexts_bake_into_the_prompt
    holds(script, check, events, found, PROMPT_EVENTS, False)


@pytest.mark.req("ENV-060")
@given(script=scripts())
@with_examples
def test_drained_steering_gets_the_same_split(impl: Implementation, script: dict[str, Any]) -> None:
    """Steering drained into the turn is split by placement like an admitted prompt."""
    result = run(impl, script)
    events, found = result["log"]["events"], records(script, result)
    steering = frozenset({"steering/message"})
    for check in (
        oracle_checks.prefix_contexts_bake_into_the_prompt,
        oracle_checks.separate_contexts_follow_their_prompt,
    ):
        holds(script, check, events, found, steering, True)


@pytest.mark.req("INBOX-020")
@given(script=scripts())
@with_examples
def test_late_steering_keeps_its_contexts(impl: Implementation, script: dict[str, Any]) -> None:
    result = run(impl, script)
    events = result["log"]["events"]
    holds(script, oracle_checks.late_steering_keeps_its_contexts, events, records(script, result))


@pytest.mark.req("INBOX-011")
@given(script=scripts())
@with_examples
def test_a_block_writes_nothing(impl: Implementation, script: dict[str, Any]) -> None:
    result = run(impl, script)
    events = result["log"]["events"]
    found = records(script, result)
    holds(script, oracle_checks.block_writes_nothing, events, found)
    # read directly from the script's listeners, whatever the host logs for a block
    holds(script, seen.blocked_submissions_write_nothing, script, result, found)


@pytest.mark.req("INBOX-013")
@given(script=scripts())
@with_examples
def test_a_blocked_prompt_ends_its_turn_rejected(
    impl: Implementation, script: dict[str, Any]
) -> None:
    events = run(impl, script)["log"]["events"]
    holds(script, oracle_checks.blocked_turn_is_rejected, events)


@pytest.mark.req("REF-007")
@pytest.mark.differential
@given(script=scripts())
@with_examples
def test_the_reference_model_agrees(
    impl: Implementation, oracle: Implementation, script: dict[str, Any]
) -> None:
    """Reference-identity check: the same script gives the reference model's requests, log
    and step outcomes byte for byte, but for what the notes leave to the host: event times
    and where a step's hook saw the log (``logLength``), and error messages.  Counts only
    for the reference profile (docs/scenario.md: a real loop is not expected to pass it)."""
    note(replayable(script))
    answers = side_by_side.both(impl, oracle, "scenario.run", script)
    got, want = map(comparable, answers)  # as returned (D-444)
    for key in ("requests", "log", "steps", "status"):
        expect_equal("REF-007", got[key], want[key], what=key, script=replayable(script))


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """*result* without event times, step log lengths and error messages (REF-007)."""
    log = result["log"]
    events = [{**e, "time": 0} for e in log["events"]]
    steps = []
    for outcome in result["steps"]:
        kept = {k: v for k, v in outcome.items() if k != "logLength"}
        if "error" in kept:
            kept["error"] = {"code": kept["error"]["code"]}
        steps.append(kept)
    return {**result, "log": {**log, "events": events}, "steps": steps}


@pytest.mark.capability("side")
@pytest.mark.req("SIDE-059")
@given(script=scripts(side=True))
def test_a_merge_back_lands_where_inject_would(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    holds(script, oracle_checks.merge_lands_like_inject, script, result)


@pytest.mark.capability("side")
@pytest.mark.req("SIDE-010")
@given(script=scripts(side=True))
def test_the_next_request_sees_a_merge_at_its_logged_position(
    impl: Implementation, script: dict[str, Any]
) -> None:
    result = run(impl, script)
    holds(script, oracle_checks.replay_equals_each_request, result, AGENT_ID)
