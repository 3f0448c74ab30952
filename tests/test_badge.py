"""The shields.io endpoint badge: what it says for passing, gapped and failing runs, and the
committed badges are in step with the committed JSON reports."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from dsh_conformance.badge import badge, render

ROOT = Path(__file__).resolve().parents[1]

#: what shields.io's endpoint badge accepts (the fields this project writes)
ENDPOINT = {
    "type": "object",
    "required": ["schemaVersion", "label", "message", "color"],
    "properties": {"schemaVersion": {"const": 1}, "label": {"type": "string"}},
}


def report(statuses: list[str], **extra: Any) -> dict[str, Any]:
    rows = [{"id": f"URI-00{i}", "level": "MUST", "status": s} for i, s in enumerate(statuses)]
    rows.append({"id": "GEN-001", "level": "informative", "status": "not applicable"})
    return {"header": {"spec_profile": "seed"}, "totals": {}, "requirements": rows, **extra}


@pytest.mark.parametrize(
    ("data", "message", "color"),
    [
        (report(["pass", "pass"]), "2/2 MUST", "brightgreen"),
        # an expected failure fails conformance: the manifest never colours the badge
        (report(["pass", "xfail", "unsupported"]), "FAIL: 1 of 3 MUST failing", "red"),
        (
            report(["pass", "fail"], totals={"pass": 1, "fail": 1}),
            "FAIL: 1 of 2 MUST failing",
            "red",
        ),
        # a partial implementation: how much was judged
        (report(["pass", "unsupported"]), "pass on 1 of 2 MUST judged", "yellow"),
        # a manifest problem fails the gate, not conformance
        (report(["pass"], expectation_problems=[{"kind": "stale"}]), "1/1 MUST", "brightgreen"),
        (report(["pass"], truncated=True), "incomplete run", "red"),
        (report(["pass"], problems=[{"code": "adapter-unreliable"}]), "adapter unreliable", "red"),
    ],
)
def test_message_counts_musts_and_colour_follows_the_verdict(
    data: dict[str, Any], message: str, color: str
) -> None:
    got = badge(data)
    jsonschema.validate(got, ENDPOINT)
    assert (got["message"], got["color"]) == (message, color)
    assert got["label"] == "dsh-conformance"


def test_committed_badges_match_the_committed_reports() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    import make_reports

    for name in make_reports.RUNS:
        committed = ROOT / "reports" / f"badge-{name}.json"
        expected = render((ROOT / "reports" / f"{name}.json").read_text("utf-8"))
        assert committed.read_text("utf-8") == expected, (
            f"run python tools/make_reports.py ({name})"
        )
        assert json.loads(expected)["schemaVersion"] == 1


def test_badge_md_renders_without_hosting_and_refuses_a_relative_endpoint() -> None:
    """badge.md pointed shields.io at `url=badge.json`, which it cannot fetch (issue 43)."""
    from dsh_conformance import badge as _badge

    report = {
        "header": {"spec_profile": "seed"},
        "verdicts": {"seed": {"judged": {"failing": 2, "passing": 5, "requirements": 9}}},
    }
    text = _badge.markdown(json.dumps(report))
    assert (
        "https://img.shields.io/badge/dsh--conformance-FAIL%3A%202%20of%209%20MUST%20failing-red"
        in text
    )
    assert "endpoint" not in text
    served = _badge.markdown(json.dumps(report), "https://example.org/ci/badge.json")
    assert "endpoint?url=https%3A%2F%2Fexample.org%2Fci%2Fbadge.json" in served
    for relative in ("badge.json", "reports/badge-x.json", "file:///tmp/badge.json"):
        with pytest.raises(ValueError, match="absolute public URL"):
            _badge.markdown(json.dumps(report), relative)
