"""A shields.io endpoint badge for one run (``badge.json``), computed from its JSON report.

https://shields.io/badges/endpoint-badge reads ``{schemaVersion, label, message, color}``
from a URL, so a committed ``reports/badge-<run>.json`` (tools/make_reports.py) or the
``badge.json`` a run writes into ``--report-dir`` becomes a README badge.  The message
counts MUST requirements that pass; the colour says whether the run passed: green when
every MUST passes, yellow when the run passed with known gaps (xfail or unsupported
through a manifest, or capabilities not declared), red when it failed.  A run that did
not finish, tested nothing applicable or lacks a required capability is red and says so
(D-175), whatever its tests say.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dsh_conformance.outcomes import FAILING


def badge(report: Mapping[str, Any]) -> dict[str, Any]:
    """The endpoint JSON for a report as ``reporting.jsonreport`` renders it."""
    musts = [r for r in report.get("requirements", []) if r.get("level") == "MUST"]
    passing = sum(r.get("status") == "pass" for r in musts)
    totals = report.get("totals", {}) or {}
    problems = report.get("problems") or []
    failed = (
        bool(problems)
        or bool(report.get("truncated"))
        or bool(report.get("expectation_problems"))
        or any(totals.get(str(outcome)) for outcome in FAILING)
    )
    profile = str(report.get("header", {}).get("spec_profile", "seed"))
    label = "dsh-conformance" + ("" if profile == "seed" else f" ({profile})")
    if problems:
        from dsh_conformance.reporting.summary import PROBLEM_WORDS

        code = str(problems[0].get("code"))
        message, color = PROBLEM_WORDS.get(code, code), "red"
    elif report.get("truncated"):
        message, color = "incomplete run", "red"
    else:
        message = f"{passing}/{len(musts)} MUST"
        color = "red" if failed else ("brightgreen" if passing == len(musts) else "yellow")
    return {"schemaVersion": 1, "label": label, "message": message, "color": color}


def render(report_json: str) -> str:
    """``badge.json`` text for the text of a JSON report."""
    return json.dumps(badge(json.loads(report_json)), indent=2) + "\n"
