"""A capability renamed or split is a protocol version the handshake negotiates, and a host
on an older version is told what it now misses (issue 37 item 3; D-290..D-292).

Catches: a harness that keeps running a protocol-1 host silently with 19 tests
unsupported (the notice is missing), one that refuses a strict protocol-1 adapter instead
of offering it version 1, and a changelog that lags the version.  Keeps: a protocol-1
host that already declares the new name (told it misses nothing), and a current host
(told nothing).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from dsh_conformance.adapters.contract import (
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOLS,
    Handshake,
    ImplementationInfo,
)
from dsh_conformance.adapters.subprocess import SubprocessAdapter
from dsh_conformance.protocol_versions import CHANGES, collected_count, notices
from dsh_conformance.smoke import smoke_checks

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
from harness_cli import cli  # noqa: E402

ROOT = TESTS.parent
OLD = TESTS / "old_protocol_host.py"
CHANGELOG = ROOT / "docs" / "protocol-changelog.md"


def hello(protocol: int, *capabilities: str) -> Handshake:
    return Handshake(ImplementationInfo("old", "python"), frozenset(capabilities), protocol)


def test_an_older_host_is_told_what_to_declare_and_how_many_tests_it_misses() -> None:
    [line] = notices(hello(1, "uri", "retention"), lambda capability: 19)
    assert line.startswith("protocol 1 host: declare `retention.truncate` to run the 19 test")
    assert "moved from `retention`" in line
    assert f"protocol {PROTOCOL_VERSION}" in line


def test_an_older_host_declaring_the_new_name_misses_nothing_and_a_current_one_hears_nothing() -> (
    None
):
    both = notices(hello(1, "retention", "retention.truncate"), lambda capability: 19)
    assert both == [
        f"protocol 1 host: nothing missed; answer the handshake with protocol "
        f"{PROTOCOL_VERSION} (docs/protocol-changelog.md)"
    ]
    [line] = notices(hello(1, "uri"), lambda capability: 19)
    assert line.startswith("protocol 1 host: nothing missed")
    assert notices(hello(PROTOCOL_VERSION, "retention"), lambda capability: 19) == []


def test_a_strict_protocol_1_adapter_is_offered_version_1_after_refusing_the_newest() -> None:
    adapter = SubprocessAdapter([sys.executable, str(OLD)], timeout=30)
    try:
        handshake = adapter.handshake()
        assert handshake.protocol == 1
        assert "retention" in handshake.capabilities
        assert adapter.call("uri.encode", {"sessionId": "x"}).startswith("dsh-session:")
    finally:
        adapter.close()


def test_smoke_tells_a_protocol_1_host_which_tests_moved() -> None:
    checks = smoke_checks(f"subprocess:{sys.executable} {OLD}")
    assert not [c for c in checks if c.status == "fail"], checks
    [note] = [c for c in checks if c.name == "protocol"]
    moved = collected_count("retention.truncate")
    assert moved > 0
    assert note.status == "note"
    assert f"declare `retention.truncate` to run the {moved} test(s)" in note.detail


def test_smoke_says_nothing_of_versions_to_a_current_host() -> None:
    checks = smoke_checks("reference")
    assert not [c for c in checks if c.name == "protocol"]


def test_run_tells_a_protocol_1_host_at_the_top(tmp_path: Path) -> None:
    done = cli(
        "run",
        "--adapter",
        f"subprocess:{sys.executable} {OLD}",
        "-k",
        "truncat",
        "--report-dir",
        str(tmp_path),
    )
    found = re.search(r"declare `retention.truncate` to run the (\d+) test", done.stderr)
    assert found is not None, done.stderr
    assert int(found.group(1)) > 0


def test_every_version_and_change_is_in_the_changelog() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    for version in SUPPORTED_PROTOCOLS:
        assert re.search(rf"^## Protocol {version}\b", text, re.M), version
    for change in CHANGES:
        assert f"`{change.before}`" in text
        assert f"`{change.after}`" in text
        assert change.decision in text
    assert SUPPORTED_PROTOCOLS[0] == PROTOCOL_VERSION


#: What the frozen hosts run: every test of the typed fields protocol 2 lacked (D-520).
FROZEN_SELECTION = (
    "-c",
    "prepare",
    "-c",
    "retention",
    "--hypothesis-profile",
    "quick",
    "--max-examples",
    "10",
    "--fail-on",
    "seed",
)


@pytest.mark.parametrize("version", [1, 2])
def test_a_host_frozen_at_a_published_version_keeps_its_verdict(
    tmp_path: Path, version: int
) -> None:
    """Issue 45 item 1 (D-520): the reference as a host written for protocol 1 or 2 --
    no typed ``sources``/``source`` -- is judged on every seed MUST of prepare and
    retention, passes them all, and no test of it is unreadable or blames the adapter."""
    from harness_cli import complete, run_record

    from dsh_conformance.reporting.verdict import verdicts

    adapter = f"subprocess:{sys.executable} {OLD} --protocol {version}"
    done, record = run_record(tmp_path, adapter, *FROZEN_SELECTION)
    complete(record)
    assert done.returncode == 0, done.stdout[-3000:]
    assert record.header["adapter"]["protocol"] == version
    seed, profile = verdicts(record)
    assert seed.passed
    assert seed.judged == seed.gating > 0, seed.headline
    assert not seed.partly, seed.headline
    assert not profile.failing, profile.headline
    assert not [t for t in record.tests if t.broke or t.unjudged], [
        (t.nodeid, t.unjudged) for t in record.tests if t.broke or t.unjudged
    ]


def test_smoke_tells_a_protocol_2_host_how_its_untyped_results_are_read() -> None:
    """D-520: smoke names each optional typed field the host leaves out and what the suite
    does instead; a host that answers them hears nothing of it."""
    checks = smoke_checks(f"subprocess:{sys.executable} {OLD} --protocol 2")
    assert not [c for c in checks if c.status == "fail"], checks
    notes = [c.detail for c in checks if c.name == "typed fields"]
    assert len(notes) == 2, notes
    assert "prepare answers without the typed `sources`" in notes[0]
    assert "retention.retain answers without the typed `source`" in notes[1]
    assert not [c for c in checks if c.name == "protocol"]  # protocol 2 misses no capability
    assert not [c for c in smoke_checks("reference") if c.name == "typed fields"]
