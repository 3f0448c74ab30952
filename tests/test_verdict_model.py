"""Two words that never mix (issue 35): conformance from what the implementation did, a
gate against the manifest, adapter faults that blame nothing, and one verdict model every
report renders (D-210..D-214)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from html import unescape
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, fake, run_record

from dsh_conformance import badge
from dsh_conformance.adapters.contract import UnreadableResult
from dsh_conformance.outcomes import Outcome, classify_failure
from dsh_conformance.record import RecordWriter, TestResult, load_record
from dsh_conformance.reporting import html, jsonreport, junit, markdown
from dsh_conformance.reporting.escape import markdown_text
from dsh_conformance.reporting.judgement import judge
from dsh_conformance.reporting.terminal import print_summary

OTHER_SCHEME = "python:fauxmplementations:other_scheme"
TWO_CAPS = "python:fauxmplementations:two_capabilities"
URI_ONLY = ("--requirement", "URI-*", "--hypothesis-profile", "quick", "--fail-on", "seed")


def test_a_written_manifest_turns_the_gate_green_never_conformance(tmp_path: Path) -> None:
    """Catches a verdict that reads the manifest (rc.8 read "pass" over 27 failing MUSTs)."""
    manifest = tmp_path / "exp.toml"
    first, record = run_record(
        tmp_path / "a", OTHER_SCHEME, *URI_ONLY, "--write-expectations", str(manifest)
    )
    assert first.returncode == 1
    assert "URI-001" in judge(record).seed.failing
    second, again = run_record(
        tmp_path / "b", OTHER_SCHEME, *URI_ONLY, "--expectations", str(manifest)
    )
    assert second.returncode == 0, second.stdout  # the gate: within expectations
    judgement = judge(again)
    assert judgement.gate.passed
    assert judgement.gate.label.startswith("within expectations")
    assert not judgement.seed.passed
    assert "URI-001" in judgement.seed.failing
    assert judgement.seed.headline.startswith("FAIL — ")
    assert "expected by the manifest" in judgement.seed.headline
    report = json.loads((tmp_path / "b" / "out" / "report.json").read_text("utf-8"))
    assert report["verdicts"]["seed"]["passed"] is False
    assert report["gate"]["passed"] is True
    # each expected failure is shown beside its manifest reason, in the record and reports
    reasons = {t.expectation_reason for t in again.tests if t.outcome == Outcome.XFAIL}
    assert reasons
    assert all(reasons)
    page = (tmp_path / "b" / "out" / "report.md").read_text("utf-8")
    assert "### Expected" in page
    assert markdown_text(next(iter(reasons))[:40]) in page  # inert Markdown (issue 43)
    assert "seed conformance: FAIL" in second.stdout
    assert "gate: within expectations" in second.stdout


def test_a_partial_implementation_says_how_little_was_judged(tmp_path: Path) -> None:
    """Catches "✅ pass (108 requirements)" after 5 seed MUSTs were judged."""
    done, record = run_record(tmp_path, TWO_CAPS, "--hypothesis-profile", "quick")
    assert done.returncode == 0, done.stdout
    seed = judge(record).seed
    assert seed.passed
    assert seed.headline.startswith(f"pass on the {seed.judged} seed MUSTs judged; ")
    assert f"{seed.gating - seed.judged} not judged (capabilities not declared)" in seed.headline
    assert seed.label == f"pass on {seed.judged} of {seed.gating} MUSTs"
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    tile = badge.badge(report)
    assert tile["color"] == "yellow"
    assert tile["message"] == f"pass on {seed.judged} of {seed.gating} MUST judged"
    # the unknown name `mentions` and the lost coverage are said, not ignored
    assert "did you mean `mention`?" in done.stdout
    assert "coverage lost:" in done.stdout


def test_an_adapter_crashing_every_twentieth_call_blames_no_requirement(tmp_path: Path) -> None:
    """Catches adapter faults charged to the notes (MENTION-001 … read as failing)."""
    done, record = run_record(
        tmp_path,
        fake("crash@20+"),
        "-c",
        "uri",
        "-c",
        "mention",
        "--hypothesis-profile",
        "quick",
        "--timeout",
        "30",
    )
    broken = [t for t in record.tests if t.outcome == Outcome.CRASH]
    assert broken, "the fault must fire"
    assert all(not t.blame for t in broken)
    judgement = judge(record)
    assert judgement.seed.failing == ()
    assert judgement.profile.failing == ()
    assert judgement.seed.label.startswith("not judged: adapter unreliable (")
    assert "crash" in judgement.seed.label
    assert [p.code for p in judgement.problems] == ["adapter-unreliable"]
    assert done.returncode == 1  # the run is not a pass, and says why
    assert "adapter-unreliable" in done.stderr


def test_pipelined_replies_in_reverse_blame_no_requirement(tmp_path: Path) -> None:
    """The fault kit's ``reorder`` in front of the reference named 13 seed MUSTs."""
    _, record = run_record(
        tmp_path, fake("reorder"), "-k", "test_case", "--hypothesis-profile", "quick"
    )
    judgement = judge(record)
    assert any(t.outcome == Outcome.CRASH for t in record.tests)
    assert judgement.seed.failing == ()
    assert judgement.seed.unreliable or judgement.seed.blocked


def test_an_unreadable_result_is_a_protocol_problem_anywhere_in_the_chain() -> None:
    unreadable = UnreadableResult("uri.decode", {"uri": "x"}, 7, "not a string")
    assert classify_failure(unreadable) is Outcome.PROTOCOL
    wrapped = AssertionError("[URI-002] decoded wrongly")
    wrapped.__cause__ = unreadable
    assert classify_failure(ExceptionGroup("two", [ValueError("x"), wrapped])) is Outcome.PROTOCOL
    assert classify_failure(AssertionError("plain")) is Outcome.FAIL


def _mixed(path: Path) -> Path:
    """A record with an unexpected seed failure, an expected one, an unreadable result and
    an unsupported test."""
    writer = RecordWriter(path)
    writer.header(
        {
            "suite_version": "0",
            "spec_profile": "seed",
            "adapter": {
                "name": "x",
                "capabilities": ["uri", "projection"],
                "implementation": {
                    "name": "host",
                    "version": "0.1.0-rc.8",
                    "components": {"@x/a": "0.1.0-rc.7", "@x/b": "0.1.0-rc.7", "@x/c": "1.0"},
                },
            },
            "expectations": "adapters/expectations/upstream.toml",
            "selected": 4,
        }
    )
    results = [
        TestResult("conformance/test_uri.py::a", Outcome.FAIL, ("URI-001",), blame=("URI-001",)),
        TestResult(
            "conformance/test_projection.py::b",
            Outcome.XFAIL,
            ("PROJ-004",),
            detail="fail",
            blame=("PROJ-004",),
            expectation="PROJ-004",
            expectation_reason="rc.8 projects a cancelled stream's partial reply",
        ),
        TestResult(
            "conformance/test_uri.py::c",
            Outcome.PROTOCOL,
            ("URI-002",),
            message="protocol: the result of uri.decode cannot be read: not a string",
            request='{"op":"uri.decode","args":{"uri":"x"},"result":7,"reason":"not a string"}',
        ),
        TestResult("conformance/test_uri.py::d", Outcome.PASS, ("URI-003",)),
    ]
    for result in results:
        writer.test(result)
    writer.footer({"status": "complete", "expectation_problems": []})
    writer.close()
    return path


def test_every_renderer_renders_the_one_verdict_model(tmp_path: Path) -> None:
    """Catches artefacts that disagree (a green headline beside a red badge)."""
    record = load_record(_mixed(tmp_path / "r.jsonl"))
    judgement = judge(record)
    seed = judgement.seed
    assert set(seed.failing) == {"URI-001", "PROJ-004"}
    assert seed.expected == ("PROJ-004",)
    assert "URI-002" in seed.unreliable  # its only test broke: not judged, not failed
    assert not judgement.gate.passed
    assert judgement.exit_status == 1
    # the implementation is named by its components, never by one package's version
    assert "0.1.0-rc.8" not in record.adapter_label
    assert "0.1.0-rc.7" in record.adapter_label

    md = markdown.render(record)
    page = unescape(html.render([record]))
    xml = junit.render(record)
    report = json.loads(jsonreport.render(record))
    console = Console(record=True, width=400)
    print_summary(record, console, all_rows=True)  # --all: each expected result too
    terminal = console.export_text()
    for text in (md, page, terminal):
        assert seed.headline.replace("—", "").split(",")[0].strip() in text.replace("—", "")
        assert judgement.gate.label.split(" (")[0] in text
        assert "rc.8 projects a cancelled stream's partial reply" in text
        assert record.adapter_label.split(" [")[0] in text
    props = {p.get("name"): p.get("value") for p in ET.fromstring(xml).iter("property")}
    assert props["verdict.seed"] == seed.label
    assert props["verdict.seed.headline"] == seed.headline
    assert props["gate"] == judgement.gate.label
    assert report["verdicts"]["seed"]["passed"] is seed.passed is False
    assert report["verdicts"]["seed"]["headline"] == seed.headline
    assert report["gate"]["label"] == judgement.gate.label
    assert report["gate"]["expected"][0]["reason"].startswith("rc.8 projects")
    tile = badge.badge(report)
    assert tile["color"] == "red"
    assert tile["message"] == "adapter unreliable"  # the run problem comes first


def test_summary_exits_with_the_gate_and_shows_both_words(tmp_path: Path) -> None:
    path = _mixed(tmp_path / "r.jsonl")
    done = cli("summary", str(path))
    assert done.returncode == 1
    assert "seed conformance: FAIL — 2 of" in done.stdout
    assert "gate: " in done.stdout


def test_an_unreadable_result_is_recorded_with_op_args_result_and_reason() -> None:
    from dsh_conformance.harness import evidence

    state = evidence.Evidence()
    unreadable = UnreadableResult("uri.decode", {"uri": "x"}, {"odd": 7}, "not a string")
    evidence.unreadable(state, unreadable)
    assert json.loads(state.request) == {
        "op": "uri.decode",
        "args": {"uri": "x"},
        "result": {"odd": 7},
        "reason": "not a string",
    }
    assert state.message.startswith("protocol: the result of uri.decode cannot be read")
    assert '{"odd":7}' in state.message


def test_smoke_names_an_unknown_capability_and_the_coverage_it_costs() -> None:
    """Catches `mentions` for `mention` ignored without a word (issue 35)."""
    from dsh_conformance.smoke import capability_checks

    declared, coverage = capability_checks(frozenset({"uri", "mentions"}))
    assert declared.status == "note"
    assert "mentions (did you mean mention?)" in declared.detail
    assert coverage.status == "note"
    assert "seed MUSTs cannot be judged" in coverage.detail
    assert "mention " in coverage.detail
    from dsh_conformance.adapters.contract import CAPABILITIES

    _, full = capability_checks(frozenset(CAPABILITIES))
    assert full.status == "ok"


def test_smoke_coverage_counts_what_own_loop_capabilities_judge() -> None:
    """Issue 45 item 5 (D-526): a host declaring ``scenario`` and ``side.scenario`` but
    not the micro-step ``agent`` and ``side`` loses no seed MUST of the notes' agent and
    side sentences that its own-loop tests judge; one declaring neither loses them."""
    from dsh_conformance.adapters.contract import CAPABILITIES
    from dsh_conformance.runner import collect
    from dsh_conformance.smoke import unjudgeable
    from dsh_conformance.spec import load_catalog

    tests = collect()
    catalog = load_catalog().requirements
    own_loop = frozenset(CAPABILITIES) - {"agent", "side", "side.deny-gate"}
    lost = unjudgeable(own_loop, tests)
    neither = unjudgeable(own_loop - {"scenario", "side.scenario"}, tests)
    side_musts = {r for r in neither if catalog[r].capability == "side"}
    assert side_musts, "without side.scenario the side sentences are lost"
    assert not side_musts & lost, sorted(side_musts & lost)
    assert len(lost) < len(neither)
    assert unjudgeable(frozenset(CAPABILITIES), tests) == set()
