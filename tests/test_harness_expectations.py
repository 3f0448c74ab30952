"""Expectation manifests: format, matching, strictness (xpass, stale), regeneration (D-125)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, complete, outcomes, run_record

from dsh_conformance.adapters.expectations import (
    Entry,
    load_manifest,
    parse_manifest,
    render_manifest,
)
from dsh_conformance.errors import ManifestError

URI_ONLY = ("--requirement", "URI-*")
PADDED = "python:fauxmplementations:padded"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_matching_by_requirement_test_id_prefix_and_file() -> None:
    manifest = parse_manifest(
        {
            "expect": [
                {"id": "URI-004", "status": "xfail", "reason": "padding"},
                {
                    "id": "conformance/test_uri.py::test_known",
                    "status": "unsupported",
                    "reason": "r",
                },
                {"id": "conformance/test_ser.py", "status": "xfail", "reason": "r"},
            ]
        }
    )
    assert manifest.match("conformance/test_x.py::t", ["URI-004"]).id == "URI-004"  # type: ignore[union-attr]
    hit = manifest.match("conformance/test_uri.py::test_known[a-b]", ["URI-004"])
    assert hit is not None
    assert hit.status == "unsupported"
    assert manifest.match("conformance/test_uri.py::test_known_other", []) is None
    assert manifest.match("conformance/test_ser.py::anything", []) is not None
    assert manifest.match("conformance/test_serx.py::anything", []) is None


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"expect": [{"id": "URI-004", "status": "maybe", "reason": "r"}]}, "invalid-manifest"),
        ({"expect": [{"id": "URI-004", "status": "xfail"}]}, "invalid-manifest"),
        ({"expect": [{"id": "URI-004", "status": "xfail", "reason": "r"}] * 2}, "duplicate-entry"),
        ({"expect": [{"id": "URI-999", "status": "xfail", "reason": "r"}]}, "unknown-requirement"),
    ],
)
def test_bad_manifests_are_typed_errors(data: dict, code: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(ManifestError) as caught:
        parse_manifest(data, path="m.toml", known_requirements=["URI-004"])
    assert caught.value.code == code


def test_render_round_trips_through_toml(tmp_path: Path) -> None:
    entries = [
        Entry('conformance/test_uri.py::test_x["\\\n]', "xfail", 'quote " and \\ and \x1b'),
        Entry("URI-001", "unsupported", "r", "https://example.test/1"),
    ]
    path = write(tmp_path / "m.toml", render_manifest(entries, adapter="x", comment="c\nd"))
    loaded = load_manifest(path)
    assert sorted(loaded.entries, key=lambda e: e.id) == sorted(entries, key=lambda e: e.id)
    assert loaded.adapter == "x"


def test_xfail_turns_known_failures_green(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "m.toml",
        """
[[expect]]
id = "URI-001"
status = "xfail"
reason = "keeps padding"
link = "https://example.test/issue/1"

[[expect]]
id = "URI-004"
status = "xfail"
reason = "keeps padding"

[[expect]]
id = "URI-002"
status = "xfail"
reason = "differs from the reference model"

[[expect]]
id = "JS-001"
status = "xfail"
reason = "round trips use the padded form"
""",
    )
    done, record = run_record(tmp_path, PADDED, *URI_ONLY, "--expectations", str(manifest))
    complete(record)
    counts = outcomes(record)
    assert counts.get("xfail", 0) > 0, counts
    assert "fail" not in counts, counts
    xfailed = [t for t in record.tests if t.outcome == "xfail"]
    assert all(t.detail in {"fail", "error"} and t.expectation for t in xfailed)
    assert done.returncode == 0, done.stdout + done.stderr


def test_unexpected_pass_and_stale_entries_fail_the_run(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "m.toml",
        """
[[expect]]
id = "URI-003"
status = "xfail"
reason = "the reference model does not fail this"

[[expect]]
id = "conformance/test_uri.py::test_every_js_string_round_trips"
status = "xfail"
reason = "nor this"

[[expect]]
id = "conformance/test_uri.py::test_that_does_not_exist"
status = "xfail"
reason = "stale"
""",
    )
    done, record = run_record(tmp_path, "reference", *URI_ONLY, "--expectations", str(manifest))
    complete(record)
    assert done.returncode == 1
    assert outcomes(record).get("xpass") == 1
    problems = {(p["id"], p["kind"]) for p in record.expectation_problems}
    assert ("URI-003", "unexpected-pass") in problems
    assert ("conformance/test_uri.py::test_that_does_not_exist", "stale") in problems
    assert "unexpected-pass" in done.stdout
    assert "stale" in done.stdout


def test_unsupported_entries_skip_before_running(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "m.toml",
        """
[[expect]]
id = "conformance/test_uri.py"
status = "unsupported"
reason = "no URI decoding in this implementation"
""",
    )
    _done, record = run_record(tmp_path, PADDED, *URI_ONLY, "--expectations", str(manifest))
    from_file = [t for t in record.tests if t.nodeid.startswith("conformance/test_uri.py")]
    assert from_file
    assert all(t.outcome == "unsupported" for t in from_file)
    assert all("no URI decoding" in t.message for t in from_file)


def test_write_expectations_then_rerun_is_green(tmp_path: Path) -> None:
    generated = tmp_path / "generated.toml"
    first, _ = run_record(tmp_path / "a", PADDED, *URI_ONLY, "--write-expectations", str(generated))
    assert first.returncode == 1
    manifest = load_manifest(generated)
    assert manifest.entries
    assert all(e.status == "xfail" for e in manifest.entries)
    second, record = run_record(tmp_path / "b", PADDED, *URI_ONLY, "--expectations", str(generated))
    assert second.returncode == 0, second.stdout
    assert "fail" not in outcomes(record)


def test_bad_manifest_is_reported_before_running(tmp_path: Path) -> None:
    manifest = write(
        tmp_path / "m.toml", '[[expect]]\nid = "URI-999"\nstatus = "xfail"\nreason = "r"\n'
    )
    done = cli("run", "--expectations", str(manifest), *URI_ONLY)
    assert done.returncode == 65
    assert "unknown-requirement" in done.stderr
