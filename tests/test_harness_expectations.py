"""Expectation manifests: format, matching, strictness (xpass, stale), regeneration (D-125)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from harness_cli import cli, complete, outcomes, run_record

from dsh_conformance.adapters.expectations import Entry, load_manifest, parse_manifest
from dsh_conformance.adapters.manifest_writer import render_manifest
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
strict = true

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
    count = len(manifest.entries)  # and it says so, on stderr
    assert f"wrote {generated}: {count} entries ({count} new, 0 kept)" in first.stderr
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


def test_versions_limit_an_entry_to_matching_implementation_versions() -> None:
    rc8 = Entry("URI-004", "xfail", "r", versions=">=0.1.0-rc.8")
    assert rc8.applies_to("0.1.0-rc.8")
    assert rc8.applies_to("0.2.0")
    assert not rc8.applies_to("0.1.0-rc.7")
    assert not rc8.applies_to("unknown")  # not a version: a versioned entry cannot apply
    either = Entry("URI-004", "xfail", "r", versions=["==0.1.0-rc.7", ">=0.3"])
    assert either.applies_to("0.1.0-rc.7")
    assert not either.applies_to("0.2.0")
    assert Entry("URI-004", "xfail", "r").applies_to("")
    manifest = parse_manifest(
        {"expect": [rc8.to_json(), {"id": "URI-001", "status": "xfail", "reason": "r"}]}
    ).for_version("0.1.0-rc.7")
    assert [e.id for e in manifest.entries] == ["URI-001"]
    assert manifest.inactive == (rc8,)


def test_a_bad_version_specifier_is_a_typed_error() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(
            {"expect": [{"id": "U", "status": "xfail", "reason": "r", "versions": "~~1"}]}
        )
    assert caught.value.code == "invalid-manifest"


def test_conditional_entries_follow_the_handshake_version(tmp_path: Path) -> None:
    """The reference model reports 0.1.0: an entry for >=9 neither applies nor goes stale."""
    entry = '[[expect]]\nid = "URI-003"\nstatus = "xfail"\nreason = "r"\nversions = "{}"\n'
    later = write(tmp_path / "later.toml", entry.format(">=9"))
    done, record = run_record(tmp_path / "a", "reference", *URI_ONLY, "--expectations", str(later))
    assert done.returncode == 0, done.stdout
    assert record.expectation_problems == []
    now = write(tmp_path / "now.toml", entry.format(">=0.1.0, <9"))
    done, record = run_record(tmp_path / "b", "reference", *URI_ONLY, "--expectations", str(now))
    assert done.returncode == 1
    assert {(p["id"], p["kind"]) for p in record.expectation_problems} == {
        ("URI-003", "unexpected-pass")
    }


MANIFEST_WITH_COMMENTS = """\
# Known gaps of the padded implementation.
adapter = "padded"

# --- URIs -----
[[expect]]
id = "URI-004"   # the padding itself
status = "xfail"
reason = "keeps '=' padding"

# --- gone -----
[[expect]]
id = "conformance/test_uri.py::test_that_does_not_exist"
status = "xfail"
reason = "stale"

# --- versioned -----
[[expect]]
id = "URI-005"
status = "xfail"
reason = "only in 9.x"
versions = ">=9"
"""


def test_write_expectations_keeps_the_comments_of_an_existing_manifest(tmp_path: Path) -> None:
    path = write(tmp_path / "m.toml", MANIFEST_WITH_COMMENTS)
    options = ("--expectations", str(path), "--write-expectations", str(path))
    run_record(tmp_path / "a", PADDED, *URI_ONLY, *options)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(MANIFEST_WITH_COMMENTS.split("# --- gone")[0])
    assert "test_that_does_not_exist" not in text
    assert "# --- versioned -----" in text  # the removed entry's trailing comment moved up
    assert 'reason = "only in 9.x"\nversions = ">=9"\n' in text  # inactive: kept verbatim
    manifest = load_manifest(path)
    assert len(manifest.entries) > 2  # the run's other failures were appended
    done, _ = run_record(tmp_path / "b", PADDED, *URI_ONLY, "--expectations", str(path))
    assert done.returncode == 0, done.stdout
