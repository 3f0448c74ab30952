"""Each seed check of conformance/test_side_scenario.py catches its broken host and passes
a host with side sessions of its own (tests/side_kit.py, tests/side_kit_variants.py), and
the reference served without the micro-step ``agent`` capability is judged on every seed
MUST of SIDE, ENV and INBOX.

The broken kits run in process on the hand-picked programs (cheap): each must fail its
sentence's check on at least one and the reference and the honest kit none.  The honest
kit then runs the side-scenario tests through the real CLI, generated programs included,
and must fail nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import side_kit
import side_kit_variants
from harness_cli import complete, run_record

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.adapters.reference import ReferenceAdapter
from dsh_conformance.conformance import own_records
from dsh_conformance.conformance import side_scenario_checks as c
from dsh_conformance.conformance.side_scenario_programs import EXAMPLES
from dsh_conformance.reporting.rows import requirement_rows
from dsh_conformance.spec import load_catalog

Check = Callable[[dict[str, Any], dict[str, Any]], object]
#: requirement -> its check, as conformance/test_side_scenario.py calls it
CHECKS: dict[str, Check] = {
    "SIDE-003": c.side_session_is_live_and_its_own,
    "SIDE-004": c.child_seed_is_a_completed_turn_prefix,
    "SIDE-005": c.child_header_stamps_lineage,
    "SIDE-006": c.fork_composes_an_ordinary_agent,
    "SIDE-007": c.framing_is_one_plugin_context,
    "SIDE-008": c.system_prompt_is_the_parents,
    "SIDE-009": c.handback_is_asked_then_injected,
    "SIDE-010": c.next_parent_request_sees_it,
    "SIDE-015": c.child_outlives_the_parent,
    "SIDE-017": c.framing_stays_out_of_the_system_prompt,
    "SIDE-019": c.no_sidechat_events,
    "SIDE-020": c.fork_leaves_the_source_untouched,
    "SIDE-024": c.framing_heads_the_appended_history,
    "SIDE-025": c.merge_is_one_capped_sidechat_context,
    "SIDE-026": c.no_cross_talk,
    "SIDE-029": c.compacted_source_forks_its_view,
    "SIDE-031": c.every_merge_is_capped_and_kept,
}
#: broken kit -> the sentences it breaks (each must fail; no other may)
BROKEN: dict[str, set[str]] = {
    "forks_the_open_turn": {"SIDE-004"},
    "stamps_no_lineage": {"SIDE-005"},
    "marks_the_source": {"SIDE-020"},
    # an unframed child is not "framed as a read-only advisor" either (SIDE-003)
    "no_framing": {"SIDE-007", "SIDE-024", "SIDE-003"},
    "framed_twice": {"SIDE-007", "SIDE-024"},
    "framing_in_the_system_prompt": {"SIDE-008", "SIDE-017", "SIDE-007", "SIDE-024", "SIDE-003"},
    "merges_over_the_cap": {"SIDE-025", "SIDE-031"},
    # a note that never reaches the parent is no merge of its (SIDE-025, SIDE-031 count it)
    "merges_into_the_child": {"SIDE-009", "SIDE-025", "SIDE-031"},
    "merges_from_another_plugin": {"SIDE-025"},
    "consolidates_notes": {"SIDE-031", "SIDE-009", "SIDE-025"},
    # a new event type is also a new session event (SIDE-010, which SIDE-025 restates)
    "writes_sidechat_events": {"SIDE-019", "SIDE-010", "SIDE-025"},
    "child_dies_with_the_parent": {"SIDE-015"},
    "echoes_the_child": {"SIDE-026"},
    "forks_the_full_history": {"SIDE-029"},
    "never_asks": {"SIDE-009", "SIDE-025", "SIDE-031"},
    "stamps_the_seed_short": {"SIDE-005"},
    # no step events (D-446, D-447): the widened readings still catch the breach
    "step_less_forks_the_open_turn": {"SIDE-004"},
    # the note's check restated by SIDE-025 (its "next request ... see it")
    "step_less_hides_the_note": {"SIDE-010", "SIDE-025"},
}
SEED_004_MUSTS = {
    r.id
    for r in load_catalog().requirements.values()
    if r.id.startswith("SIDE-") and r.level == "MUST" and getattr(r, "seed", "") == "004"
}


def failing(impl: Implementation) -> dict[str, str]:
    """The requirements whose check fails on some hand-picked program, with the first
    failure's message."""
    found: dict[str, str] = {}
    for script in EXAMPLES:
        result = own_records.side_outcome(impl.call("side.scenario.run", **script))
        for rid, rule in CHECKS.items():
            if rid == "SIDE-029" and "seed" not in script["parent"]:
                continue
            try:
                rule(script, result)
            except AssertionError as exc:
                found.setdefault(rid, str(exc)[:300])
    return found


def test_every_seed_must_of_note_004_has_a_check() -> None:
    assert set(CHECKS) == SEED_004_MUSTS


@pytest.mark.parametrize(
    "impl",
    [
        Implementation(ReferenceAdapter(), "reference"),
        Implementation(side_kit.side_kit(), "kit"),
    ],
    ids=["reference", "kit"],
)
def test_a_conforming_host_passes_every_check(impl: Implementation) -> None:
    assert failing(impl) == {}


ALLOWED = (
    "keeps_the_tail",
    "frames_in_a_turn",
    "refuses_long_notes",
    "frames_in_its_first_turn",
    "logs_telemetry",
    "writes_no_steps",
)


@pytest.mark.parametrize("factory", ALLOWED)
def test_an_allowed_difference_passes_every_check(factory: str) -> None:
    """A note cut at its start, injection turns with a meta of the host's own, a note over
    the cap refused, the framing written inside the child's first turn (its turn/start
    equal to the parent's open one), records of the host's own in both logs and in the
    fork's seed, no step/start, step/end or request/header events at all: the note leaves
    each to the host (D-443, D-444, D-446, D-447)."""
    assert failing(Implementation(getattr(side_kit_variants, factory)(), factory)) == {}


@pytest.mark.parametrize("factory", sorted(BROKEN))
def test_a_broken_host_fails_its_sentence_only(factory: str) -> None:
    found = failing(Implementation(getattr(side_kit_variants, factory)(), factory))
    assert set(found) == BROKEN[factory], found


def test_a_mistyped_stamp_hides_only_its_own_check() -> None:
    """Issue 42 item 2 (D-522): seedLength "21" leaves SIDE-005 unjudged; the breach beside
    it (the framing in the system prompt) still fails SIDE-008 and SIDE-017, and every
    check not reading the stamp judges."""
    from dsh_conformance.unjudged import UnreadableField

    factory = "mistyped_stamp_beside_a_breach"
    impl = Implementation(getattr(side_kit_variants, factory)(), factory)
    failed: set[str] = set()
    unread: dict[str, str] = {}
    for script in EXAMPLES:
        result = impl.call("side.scenario.run", **script)
        for rid, rule in CHECKS.items():
            if rid == "SIDE-029" and "seed" not in script["parent"]:
                continue
            try:
                rule(script, result)
            except AssertionError:
                failed.add(rid)
            except UnreadableField as exc:
                unread.setdefault(rid, exc.field)
    assert {"SIDE-008", "SIDE-017"} <= failed, failed
    assert "SIDE-005" in unread, (failed, unread)
    assert "SIDE-005" not in failed, (failed, unread)
    assert unread["SIDE-005"].endswith("/seedLength"), unread
    assert failed | set(unread) != set(CHECKS), "every check stopped: not per field"


QUICK = ("--hypothesis-profile", "quick", "--fail-on", "seed")


def test_the_kit_passes_the_side_scenario_tests_through_the_cli(tmp_path: Path) -> None:
    done, record = run_record(tmp_path, "python:side_kit:side_kit", *QUICK, "-r", "SIDE-*")
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    # SIDE-007's structure passes; what the kit's own framing says awaits a person (D-199)
    judged = {rid for rid in SEED_004_MUSTS if rows.get(rid) in {"pass", "review"}}
    assert judged == SEED_004_MUSTS, rows
    assert rows["SIDE-007"] == "review", rows


@pytest.mark.parametrize("factory", ["frames_in_its_first_turn", "logs_telemetry"])
def test_an_allowed_kit_passes_the_side_scenario_tests_through_the_cli(
    tmp_path: Path, factory: str
) -> None:
    """Issue 42 item 3, generated programs included: every seed MUST of note 004 passes."""
    adapter = f"python:side_kit_variants:{factory}"
    done, record = run_record(tmp_path, adapter, *QUICK, "-r", "SIDE-*")
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert {rid for rid in SEED_004_MUSTS if rows.get(rid) not in {"pass", "review"}} == set(), rows


def test_a_mistyped_stamp_is_named_and_unjudged_through_the_cli(tmp_path: Path) -> None:
    """D-522 end to end: SIDE-005 reads not judged (the field, the type, the value named),
    the breach fails SIDE-008, no test is a protocol problem."""
    adapter = "python:side_kit_variants:mistyped_stamp_beside_a_breach"
    done, record = run_record(tmp_path, adapter, *QUICK, "-r", "SIDE-00[58]")
    complete(record)
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows["SIDE-008"] == "fail", rows
    assert rows["SIDE-005"] == "not judged: unreadable field", rows
    assert not [t for t in record.tests if str(t.outcome) == "protocol"]
    assert '/child/log/header/seedLength (expected integer, got "' in done.stdout
    assert "adapter unreliable" not in done.stdout


def test_a_broken_kit_is_blamed_on_its_sentence_through_the_cli(tmp_path: Path) -> None:
    adapter = "python:side_kit_variants:forks_the_open_turn"
    done, record = run_record(tmp_path, adapter, *QUICK, "-r", "SIDE-*")
    complete(record)
    assert done.returncode == 1, done.stdout[-3000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert {rid for rid, status in rows.items() if status == "fail"} == {"SIDE-004"}, rows


def test_the_reference_without_agent_is_judged_on_every_seed_must(tmp_path: Path) -> None:
    """Issue 37: served with ``agent`` withheld from its handshake, the reference is judged
    on every seed MUST of SIDE, ENV and INBOX (before side.scenario: 28 of 45)."""
    catalog = load_catalog().requirements
    musts = {
        r.id
        for r in catalog.values()
        if r.level == "MUST" and r.id.split("-")[0] in {"SIDE", "ENV", "INBOX"}
        and getattr(r, "seed", "") in {"000", "004"}
    }  # fmt: skip
    selection = ("-r", "SIDE-*", "-r", "ENV-*", "-r", "INBOX-*")
    adapter = "python:side_kit:reference_without_agent"
    done, record = run_record(tmp_path, adapter, *QUICK, *selection)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    declared = record.header["adapter"]["capabilities"]
    assert "agent" not in declared
    assert "side.scenario" in declared
    rows = {row.id: row.status for row in requirement_rows(record)}
    unjudged = {rid for rid in musts if rows.get(rid) not in {"pass", "review"}}
    assert not unjudged, {rid: rows.get(rid) for rid in sorted(unjudged)}
    assert len(musts) == 45
    # smoke's coverage line counts what the run judges (issue 45 item 5, D-526)
    from dsh_conformance.smoke import unjudgeable

    assert not unjudgeable(frozenset(declared)) & musts
