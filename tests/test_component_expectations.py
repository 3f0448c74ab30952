"""Manifest entries that target a component version (D-188)."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fauxmplementations import PaddedUris
from harness_cli import run_record

from dsh_conformance.adapters.contract import Handshake
from dsh_conformance.adapters.expectations import Entry, load_manifest, parse_manifest
from dsh_conformance.adapters.manifest_writer import render_manifest, update_manifest
from dsh_conformance.errors import ManifestError

AGENT = "@deepseek-ai/dsh-agent"
RELEASES = ("0.1.0-rc.6", "0.1.0-rc.7", "0.1.0-rc.8", "0.1.1-rc.2")


class _PaddedAgent(PaddedUris):
    """The padded URI implementation, reporting an agent component at 0.1.1-rc.2."""

    def handshake(self) -> Handshake:
        base = super().handshake()
        impl = attrs.evolve(base.implementation, components={AGENT: "0.1.1-rc.2"})
        return attrs.evolve(base, implementation=impl)


def padded_agent() -> _PaddedAgent:
    return _PaddedAgent()


def test_prereleases_order_as_the_releases_do() -> None:
    """rc.6 < rc.7 < rc.8 < 0.1.1-rc.2, whatever the range's form."""
    for i, low in enumerate(RELEASES):
        at_least = Entry("URI-004", "xfail", "r", components={AGENT: f">={low}"})
        below = Entry("URI-004", "xfail", "r", components={AGENT: f"<{low}"})
        for j, version in enumerate(RELEASES):
            assert at_least.applies_to("", {AGENT: version}) is (j >= i)
            assert below.applies_to("", {AGENT: version}) is (j < i)
    assert Entry("U", "xfail", "r", components={AGENT: ">=0.1.1-rc.0"}).applies_to(
        "", {AGENT: "0.1.1"}
    )
    assert Entry("U", "xfail", "r", components={AGENT: "==0.1.0-rc.8"}).applies_to(
        "", {AGENT: "0.1.0-rc.8"}
    )
    assert not Entry("U", "xfail", "r", components={AGENT: "==0.1.0-rc.8"}).applies_to(
        "", {AGENT: "0.1.0-rc.10"}
    )


def test_every_component_must_be_present_and_match() -> None:
    both = Entry("U", "xfail", "r", components={AGENT: ">=0.1.1-rc.0", "x": "<2"})
    assert both.applies_to("", {AGENT: "0.1.1-rc.2", "x": "1.0.0"})
    assert not both.applies_to("", {AGENT: "0.1.1-rc.2"})  # x absent
    assert not both.applies_to("", {AGENT: "0.1.1-rc.2", "x": "2.0.0"})
    assert not both.applies_to("", {AGENT: "not a version", "x": "1.0.0"})
    mixed = Entry("U", "xfail", "r", versions="==0.1.0-rc.8", components={AGENT: ">=0.1.1-rc.0"})
    assert mixed.applies_to("0.1.0-rc.8", {AGENT: "0.1.1-rc.2"})
    assert not mixed.applies_to("0.1.0-rc.7", {AGENT: "0.1.1-rc.2"})


def test_a_bad_component_range_is_a_typed_error() -> None:
    with pytest.raises(ManifestError) as caught:
        parse_manifest(
            {
                "expect": [
                    {"id": "U", "status": "xfail", "reason": "r", "components": {AGENT: "^0.1.0"}}
                ]
            }
        )
    assert caught.value.code == "invalid-manifest"
    assert "components." + AGENT in str(caught.value)


def test_component_entries_round_trip_through_toml(tmp_path: Path) -> None:
    entry = Entry("URI-004", "xfail", "r", components={AGENT: ">=0.1.1-rc.0"})
    text = render_manifest([entry])
    assert f'components = {{"{AGENT}" = ">=0.1.1-rc.0"}}' in text
    path = tmp_path / "m.toml"
    path.write_text(text, encoding="utf-8")
    assert load_manifest(path).entries == (entry,)
    updated = update_manifest("", [entry])
    path.write_text(updated, encoding="utf-8")
    assert load_manifest(path).entries == (entry,)


def test_a_component_entry_applies_in_a_run(tmp_path: Path) -> None:
    """The padded implementation fails URI-004 with its agent at 0.1.1-rc.2: the harness
    matches the entry against the handshake's components (inactive entries are never stale:
    the same rule as versions, test_conditional_entries_follow_the_handshake_version)."""
    adapter = "python:test_component_expectations:padded_agent"
    entries = [
        Entry("URI-004", "xfail", "r", components={AGENT: ">=0.1.1-rc.0"}),
        Entry("URI-003", "xfail", "r", components={AGENT: "<0.1.1-rc.0"}),  # inactive
    ]
    manifest = tmp_path / "m.toml"
    manifest.write_text(render_manifest(entries), encoding="utf-8")
    done, record = run_record(
        tmp_path / "a", adapter, "-r", "URI-00[34]", "--expectations", str(manifest)
    )
    assert done.returncode == 0, done.stdout
    assert "xfail" in {str(t.outcome) for t in record.tests}
    assert record.expectation_problems == []
    assert record.components == {AGENT: "0.1.1-rc.2"}
