"""The conformance suite against the published release, gated by its strict manifest.

``dsh-conformance run --adapter upstream`` must pass with adapters/expectations/upstream.toml
(every divergence of rc.8 listed and traced to a requirement) and must fail when an entry is
removed, goes stale, or names a test that passes.  The release profile must pass with no
manifest at all.  Needs Node and ``npm ci --prefix adapters/upstream``: skipped locally with
the reason when missing, a failure under CI (D-141).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dsh_conformance.adapters import upstream
from dsh_conformance.adapters.upstream import UpstreamUnavailable

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "adapters" / "expectations" / "upstream.toml"
SEED = "20260824"


@pytest.fixture(scope="module")
def needs_upstream() -> None:
    try:
        upstream.command(install=False)
    except UpstreamUnavailable as exc:
        reason = f"upstream adapter unavailable ({exc.reason}): {exc.message}; {exc.hint}"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(reason)
        pytest.skip(reason)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        "-c",
        "from dsh_conformance.cli import main; main()",
        "run",
        "--adapter",
        "upstream",
        "--hypothesis-profile",
        "ci",
        "--seed",
        SEED,
        "--format",
        "json",
        *args,
    ]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=1800, check=False
    )


def manifest_without(entry_id: str, tmp_path: Path, extra: str = "") -> Path:
    """A copy of the manifest with one entry removed and *extra* TOML appended."""
    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    assert any(e["id"] == entry_id for e in data["expect"]), entry_id
    blocks = MANIFEST.read_text(encoding="utf-8").split("\n[[expect]]\n")
    kept = [b for b in blocks if f'id = "{entry_id}"' not in b]
    path = tmp_path / "upstream.toml"
    path.write_text("\n[[expect]]\n".join(kept) + extra, encoding="utf-8")
    return path


URI_ENTRY = "conformance/test_uri.py::test_non_string_uri_is_invalid_reference"


@pytest.mark.usefixtures("needs_upstream")
def test_the_seed_profile_passes_with_the_manifest() -> None:
    # The whole suite on Node: two workers (one Node adapter each) halve the wall time;
    # a parallel run has the same per-test outcomes as a serial one (D-138).
    done = run_cli("--workers", "2")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.usefixtures("needs_upstream")
def test_the_release_profile_passes_without_a_manifest() -> None:
    done = run_cli("--spec-profile", "release", "--no-expectations")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.usefixtures("needs_upstream")
def test_removing_an_entry_fails_the_run(tmp_path: Path) -> None:
    manifest = manifest_without(URI_ENTRY, tmp_path)
    # URI-005 is a profile requirement: only a gate on the profile fails the run (D-161).
    # One run; the profile gate re-judges its record (the same outcomes, no second Node run).
    out = tmp_path / "out"
    args = ("--expectations", str(manifest), "--requirement", "URI-005")
    assert run_cli(*args, "--report-dir", str(out)).returncode == 0
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_conformance.cli",
            "summary",
            str(out / "record.jsonl"),
            "--fail-on",
            "profile",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]


@pytest.mark.usefixtures("needs_upstream")
def test_a_stale_entry_and_an_entry_for_a_passing_test_fail_the_run(tmp_path: Path) -> None:
    """Both in one run (each is an expectation problem, and any one fails the run)."""
    stale = (
        '\n[[expect]]\nid = "conformance/test_uri.py::test_that_does_not_exist"\n'
        'status = "xfail"\nreason = "URI-005: stale on purpose"\n'
    )
    passing = (
        '\n[[expect]]\nid = "conformance/test_uri.py::test_every_js_string_round_trips"\n'
        'status = "xfail"\nreason = "URI-002: passes, so this entry is wrong"\nstrict = true\n'
    )  # strict: a property that meets no failure is otherwise only not reproduced (D-422)
    manifest = tmp_path / "upstream.toml"
    manifest.write_text(MANIFEST.read_text(encoding="utf-8") + stale + passing, encoding="utf-8")
    out = tmp_path / "out"
    done = run_cli(
        "--expectations",
        str(manifest),
        "-r",
        "URI-005",
        "-r",
        "URI-002",
        "--report-dir",
        str(out),
    )
    assert done.returncode == 1, done.stderr[-2000:]
    assert "stale" in done.stdout + done.stderr
    from dsh_conformance.record import load_record

    record = load_record(out / "record.jsonl")
    assert {(p["id"], p["kind"]) for p in record.expectation_problems} == {
        ("conformance/test_uri.py::test_that_does_not_exist", "stale")
    }
    passing_id = "conformance/test_uri.py::test_every_js_string_round_trips"
    assert str(record.by_nodeid()[passing_id].outcome) == "xpass"


def test_every_entry_names_a_requirement_and_a_cause() -> None:
    from dsh_conformance.spec import load_catalog

    known = load_catalog().requirements
    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    assert data["adapter"] == "upstream"
    for entry in data["expect"]:
        head, _, cause = entry["reason"].partition(":")
        ids = [i.strip() for i in head.split(",")]
        assert ids, entry["id"]
        assert all(i in known for i in ids), entry["id"]
        assert len(cause.strip()) > 20, entry["id"]


def test_every_property_entry_names_what_it_blames() -> None:
    """D-421: an entry for a property test names the ids its failure may blame, so a
    property that starts failing another sentence is an unexpected result."""
    import importlib

    data = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))
    for entry in data["expect"]:
        file, _, name = entry["id"].partition("::")
        module = importlib.import_module(f"dsh_conformance.conformance.{Path(file).stem}")
        test = getattr(module, name.split("[", 1)[0])
        if getattr(test, "is_hypothesis_test", False) and entry["status"] == "xfail":
            assert entry.get("blames"), entry["id"]
