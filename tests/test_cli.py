"""The ``dsh-conformance`` command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, fake, served

from dsh_conformance.cli import main
from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RecordWriter, TestResult
from dsh_conformance.spec import schema


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def record(path: Path, *outcomes: str, footer: bool = True) -> Path:
    writer = RecordWriter(path)
    writer.header(
        {
            "spec_profile": "seed",
            "adapter": {"name": "x"},
            "filters": {"requirements": ["URI-*"]},
            "selected": len(outcomes),
        }
    )
    for index, outcome in enumerate(outcomes):
        writer.test(
            TestResult(f"conformance/test_uri.py::t{index}", Outcome(outcome), ("URI-001",))
        )
    if footer:
        writer.footer({"status": "complete"})
    writer.close()
    return path


def test_run_with_no_arguments_targets_the_reference_model(tmp_path: Path) -> None:
    done = cli("run", "--requirement", "URI-00[12]", "--seed", "3", "--all")
    assert done.returncode == 0, done.stderr
    assert "URI-001" in done.stdout
    assert "URI-002" in done.stdout
    assert "pass" in done.stdout
    assert "URI-003" not in done.stdout  # filtered runs list only cited requirements
    assert "seed 3" in done.stderr  # people-facing lines go to stderr


def test_run_json_output_and_report_dir(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli("run", "-r", "SER-005", "--format", "json", "--report-dir", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["header"]["adapter"]["transport"] == "in-process"
    assert data["header"]["hypothesis"]["seed"] is not None  # every run is seeded
    assert {r["id"] for r in data["requirements"]} <= {"SER-005", "REF-010"}  # cases cite both
    validator = jsonschema.Draft202012Validator(schema("record.json"))
    for line in (out / "record.jsonl").read_text().splitlines():
        validator.validate(json.loads(line))
    assert {p.name for p in out.iterdir()} >= {
        "record.jsonl",
        "report.md",
        "junit.xml",
        "report.html",
        "report.json",
        "pytest.log",
    }


def test_run_reports_an_unknown_adapter_with_a_code() -> None:
    """A configuration error (78, D-177), before any collection."""
    done = cli("run", "--adapter", "nonsense", "-r", "URI-001")
    assert done.returncode == 78
    assert "unknown adapter 'nonsense'" in done.stderr
    assert "known adapter kinds" in done.stderr


def test_run_with_nothing_selected() -> None:
    done = cli("run", "-k", "no_test_has_this_name")
    assert done.returncode == 5
    assert "nothing-selected" in done.stderr


def test_smoke_passes_for_sound_adapters() -> None:
    for adapter in ("reference", served()):
        status, out, _ = invoke("smoke", "--adapter", adapter)
        assert status == 0, out
        assert "handshake" in out
        assert "lone surrogate" in out
        assert "fail" not in out


@pytest.mark.parametrize("fault", ["garbage:uri.encode", "error:uri.encode", "bad-protocol"])
def test_smoke_blames_broken_adapters(fault: str) -> None:
    status, out, _ = invoke("smoke", "--adapter", fake(fault), "--timeout", "5")
    assert status == 70, out
    assert "fail" in out


def test_smoke_blames_a_declared_capability_with_a_missing_operation() -> None:
    """Issue 14: mention.format belongs to uri; declaring uri without it is caught."""
    adapter = fake("error=DSH_UNSUPPORTED_OPERATION:mention.format")
    status, out, _ = invoke("smoke", "--adapter", adapter, "--timeout", "5")
    assert status == 70, out
    row = next(line for line in out.splitlines() if "uri ops" in line)
    assert "fail" in row
    assert "mention.format" in out
    assert "mention ops" in out


def test_adapters_lists_the_built_ins() -> None:
    status, out, _ = invoke("adapters")
    assert status == 0
    assert "reference" in out
    assert "subprocess" in out
    assert "python" in out


def test_summary_exit_status_follows_the_run(tmp_path: Path) -> None:
    assert invoke("summary", str(record(tmp_path / "ok.jsonl", "pass", "unsupported")))[0] == 0
    assert invoke("summary", str(record(tmp_path / "bad.jsonl", "pass", "crash")))[0] == 1
    cut = str(record(tmp_path / "cut.jsonl", "pass", footer=False))
    status, out, err = invoke("summary", cut)
    assert status == 3  # EX_INCOMPLETE: a truncated run is never a green one
    assert "TRUNCATED" in out
    assert "error[incomplete-record]" in err
    assert invoke("summary", cut, "--allow-incomplete")[0] == 0  # judged by what ran
    cut_bad = str(record(tmp_path / "cut-bad.jsonl", "crash", footer=False))
    assert invoke("summary", cut_bad, "--allow-incomplete")[0] == 1


def test_summary_of_garbage_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("hello\n")
    status, _, err = invoke("summary", str(path))
    assert status == 65
    assert "record-not-json" in err


def test_report_and_diff(tmp_path: Path) -> None:
    old = record(tmp_path / "old.jsonl", "pass", "pass")
    new = record(tmp_path / "new.jsonl", "pass", "fail")
    status, out, _ = invoke("report", str(old), str(new), "--format", "html")
    assert status == 0
    assert out.startswith("<!doctype html>")
    assert out.count("<th>") == 3
    status, out, _ = invoke("report", str(new), "--format", "junit")
    assert status == 0
    assert '<testsuites name="dsh-conformance">' in out
    assert '<testsuite name="conformance"' in out  # the seed MUSTs as test cases (D-463)
    status, out, _ = invoke("diff", str(old), str(new))
    assert status == 1
    assert "New failures" in out
    assert invoke("diff", str(new), str(old))[0] == 0


def test_spec_shows_seed_sentence_decisions_and_tests() -> None:
    done = cli("spec", "URI-004")
    assert done.returncode == 0, done.stderr
    assert "seed" in done.stdout
    assert "D-5" in done.stdout
    assert "conformance/test_uri.py::" in done.stdout
    unknown = cli("spec", "URI-999")
    assert unknown.returncode == 78
    assert "unknown-requirement" in unknown.stderr


def test_coverage_lists_untested_musts() -> None:
    done = cli("coverage", "--format", "json")
    data = json.loads(done.stdout)
    assert data["musts"] >= data["covered"] > 0
    assert done.returncode == (1 if data["untested"] else 0)


def test_undeclared_capabilities_are_unsupported_not_failures(tmp_path: Path) -> None:
    adapter = served() + " --capabilities uri"
    out = tmp_path / "out"
    done = cli("run", "-a", adapter, "-r", "URI-001", "-r", "SER-001", "--report-dir", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads((out / "report.json").read_text())
    statuses = {r["id"]: r["status"] for r in data["requirements"]}
    assert statuses["URI-001"] == "pass"
    assert statuses["SER-001"] == "unsupported"
    assert set(statuses.values()) == {"pass", "unsupported"}
    assert data["compliance"] == 1.0  # unsupported tests do not count against it


def test_keyword_selection_is_reflected_in_the_record(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli("run", "-r", "URI-*", "-k", "surrogate", "--report-dir", str(out))
    assert done.returncode == 0, done.stderr
    lines = (out / "record.jsonl").read_text().splitlines()
    header, tests = json.loads(lines[0]), [json.loads(line) for line in lines[1:-1]]
    assert header["filters"]["keyword"] == "surrogate"
    assert header["selected"] == len(tests) > 0
    assert all("surrogate" in t["nodeid"] for t in tests)


def test_spec_profile_selects_tests_through_their_requirements(tmp_path: Path) -> None:
    from dsh_conformance.spec import load_catalog

    out = tmp_path / "out"
    done = cli("run", "--spec-profile", "release", "--report-dir", str(out))
    # PROJ-012 (release profile, capability projection) runs on the reference model, which
    # writes no interrupted assistant message: it passes; every other release test is unsupported
    assert done.returncode == 0, done.stderr
    assert "release profile: pass" in done.stdout
    lines = (out / "record.jsonl").read_text().splitlines()
    tests = [json.loads(line) for line in lines[1:-1]]
    catalog = load_catalog().requirements
    assert tests
    for test in tests:
        assert any("release" in catalog[r].profiles for r in test["requirements"]), test
    assert json.loads(lines[0])["spec_profile"] == "release"
