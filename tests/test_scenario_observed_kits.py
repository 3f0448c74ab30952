"""Each observation check of the scenario tests catches its broken host and passes an
allowed different one (tests/faux_scenario.py), through the real CLI.

A broken kit runs the tests of its requirement only and must fail exactly there; an allowed
kit runs the scenario tests its difference touches and must fail nothing of the seed
verdict (it may differ from the reference model's bytes: REF-007 is the profile's).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import complete, run_record

from dsh_conformance.reporting.summary import requirement_rows

QUICK = ("--hypothesis-profile", "quick", "--fail-on", "seed")


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
def test_a_broken_host_is_caught_by_its_check(
    tmp_path: Path, factory: str, requirement: str
) -> None:
    done, record = run_record(
        tmp_path, f"python:faux_scenario:{factory}", *QUICK, "-c", "scenario", "-r", requirement
    )
    complete(record)
    assert done.returncode == 1, done.stdout[-2000:]
    rows = {row.id: row.status for row in requirement_rows(record)}
    assert rows[requirement] == "fail", rows


@pytest.mark.parametrize(
    ("factory", "selection"),
    [
        ("contexts_appended", ("-r", "INBOX-01*", "-r", "ENV-06*")),
        ("inject_meta_not_logged", ("-r", "INBOX-00*", "-r", "ENV-051")),
        ("unfinished_leaves_nothing", ("-r", "PROJ-*")),
        ("host_log_events", ("-r", "ENV-052")),
        ("turn_end_later", ()),  # the schedule touches every check
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
