"""Each observation check of the scenario tests catches its broken host and passes an
allowed different one (tests/faux_scenario.py), through the real CLI.

A broken kit must fail its requirement's check on the hand-picked scripts of that check's
test (in process: cheap); an allowed kit runs the scenario tests its difference touches
through the CLI, generated scripts included, and must fail nothing of the seed verdict (it
may differ from the reference model's bytes: REF-007 is the profile's).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import faux_scenario
from harness_cli import complete, run_record

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance import own_records
from dsh_conformance.conformance import scenario_observed as seen
from dsh_conformance.conformance import test_scenario_observed as observed
from dsh_conformance.conformance import test_scenario_partial as partial
from dsh_conformance.conformance.scenario_oracle import records
from dsh_conformance.conformance.scenario_programs import EXAMPLES
from dsh_conformance.reporting.rows import requirement_rows

QUICK = ("--hypothesis-profile", "quick", "--fail-on", "seed")


def _partial(script: dict[str, Any], result: dict[str, Any]) -> None:
    outcome = result["steps"][-1]
    if outcome.get("prepared"):
        assert "partial-1" not in json.dumps(outcome["prepared"]), "partial text in the snapshot"


def _found(
    rule: Callable[..., None], *head: str
) -> Callable[[dict[str, Any], dict[str, Any]], None]:
    """*rule* called with the arguments its name in scenario_observed asks for."""

    def call(script: dict[str, Any], result: dict[str, Any]) -> None:
        values = {
            "script": script,
            "result": result,
            "events": result["log"]["events"],
            "found": records(script, result) if "found" in head else None,
        }
        rule(*(values[name] for name in head))

    return call


#: requirement -> (the check, as the conformance test calls it)
CHECKS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "ENV-052": _found(seen.prefix_adds_no_event, "events"),
    "ENV-061": _found(seen.prompt_submit_sees_only_the_direct_prompt, "result", "found"),
    "ENV-062": _found(seen.rewrite_reaches_content_and_display, "events"),
    "INBOX-001": _found(seen.each_record_is_one_snapshot, "script", "result", "found"),
    "INBOX-004": _found(seen.queued_reports_the_frozen_contexts, "result", "found"),
    "INBOX-006": _found(seen.inject_accepts_source_and_meta, "script", "result"),
    "INBOX-012": _found(seen.waterfall_allow_is_authoritative, "script", "result", "found"),
    "INBOX-030": _found(seen.mentions_are_carried_verbatim, "script", "result"),
    "INBOX-032": _found(seen.prepared_contexts_reach_the_agent, "script", "result"),
    "INBOX-034": _found(seen.only_the_queued_path_dispatches_prompt_submit, "result", "found"),
    "INBOX-035": _found(seen.preparation_creates_no_turn, "script", "result"),
    "PROJ-004": _partial,
}
#: the scripts each check runs on (the hand-picked ones of its conformance test)
SCRIPTS: dict[str, tuple[dict[str, Any], ...]] = {
    "ENV-052": (*EXAMPLES, *observed.WATERFALLS),
    "ENV-061": EXAMPLES,
    "ENV-062": (*EXAMPLES, *observed.WATERFALLS),
    "INBOX-001": tuple(s for s in EXAMPLES if "listeners" not in s),
    "INBOX-004": EXAMPLES,
    "INBOX-006": (*EXAMPLES, *observed.INJECTS),
    "INBOX-012": (*EXAMPLES, *observed.WATERFALLS),
    "INBOX-030": (observed.MENTION,),
    "INBOX-032": observed.PREPARED,
    "INBOX-034": EXAMPLES,
    "INBOX-035": observed.PREPARE_ONLY,
    "PROJ-004": tuple(partial.SCRIPTS.values()),
}


def outcome(impl: Implementation, script: dict[str, Any]) -> dict[str, Any]:
    """The outcome as the conformance tests read it: the host's own records set aside."""
    result: dict[str, Any] = own_records.scenario_outcome(impl.call("scenario.run", **script))
    return result


@pytest.mark.parametrize(
    ("factory", "requirement"),
    [
        ("prefix_echo", "ENV-052"),
        ("baked_before_submit", "ENV-061"),
        ("rewrite_display_stale", "ENV-062"),
        ("source_unresolved", "INBOX-001"),
        ("queued_without_contexts", "INBOX-004"),
        ("inject_refuses_meta", "INBOX-006"),
        ("allow_not_authoritative", "INBOX-012"),
        ("expands_mentions", "INBOX-030"),
        ("strips_context_meta", "INBOX-032"),
        ("steering_submits", "INBOX-034"),
        ("preparing_host_injects", "INBOX-035"),
        ("partial_as_message", "PROJ-004"),
    ],
)
def test_a_broken_host_is_caught_by_its_check(factory: str, requirement: str) -> None:
    """In process, on the hand-picked scripts of the check's test: the reference passes
    every one, the broken host fails at least one."""
    broken = Implementation(getattr(faux_scenario, factory)(), factory)
    reference = Implementation(faux_scenario.KitAdapter(), "reference")
    caught = []
    for script in SCRIPTS[requirement]:
        CHECKS[requirement](script, outcome(reference, script))
        try:
            CHECKS[requirement](script, outcome(broken, script))
        except AssertionError as exc:
            caught.append(str(exc))
    assert caught, f"{factory} passed every {requirement} script"


@pytest.mark.parametrize(
    ("factory", "selection"),
    [
        ("contexts_appended", ("-r", "INBOX-01*", "-r", "ENV-06*")),
        ("inject_meta_not_logged", ("-r", "INBOX-00*", "-r", "ENV-051")),
        ("unfinished_leaves_nothing", ("-r", "PROJ-*")),
        ("host_log_events", ("-r", "ENV-052")),
        ("turn_end_later", ()),  # the schedule touches every check
        ("host_telemetry", ()),  # records of its own in every log: every check reads logs
    ],
)
def test_an_allowed_difference_fails_no_seed_check(
    tmp_path: Path, factory: str, selection: tuple[str, ...]
) -> None:
    adapter = f"python:faux_scenario:{factory}"
    done, record = run_record(tmp_path, adapter, *QUICK, "-c", "scenario", *selection)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert not [r for r, s in rows.items() if s == "fail" and not r.startswith("REF-")], rows


def test_an_allow_that_keeps_the_record_contexts_fails_only_the_profile(tmp_path: Path) -> None:
    """Issue 42 item 3 (D-445): an allow without additionalContexts read as "keep the
    record's contexts", on the host's own loop and in micro-steps, passes every seed check
    of the waterfall and placement (the state machines, identity checks only, left out);
    only the reference's reading (INBOX-140) and identity fail."""
    adapter = "python:faux_scenario:allow_keeps_contexts_everywhere"
    selection = ("-r", "INBOX-01*", "-r", "INBOX-140", "-r", "ENV-05*", "-k", "not machine")
    done, record = run_record(tmp_path, adapter, *QUICK, *selection)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    failing = {r for r, s in rows.items() if s == "fail" and not r.startswith("REF-")}
    assert failing == {"INBOX-140"}, rows
    assert rows["INBOX-012"] == "pass", rows
