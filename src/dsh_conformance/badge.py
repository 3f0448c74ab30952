"""A shields.io endpoint badge for one run (``badge.json``), computed from its JSON report.

https://shields.io/badges/endpoint-badge reads ``{schemaVersion, label, message, color}``
from a URL, so a committed ``reports/badge-<run>.json`` (tools/make_reports.py) or the
``badge.json`` a run writes into ``--report-dir`` becomes a README badge.  The message
counts MUST requirements that pass; the colour says whether the run passed: green when
every MUST passes, yellow when the run passed with known gaps (xfail or unsupported
through a manifest, or capabilities not declared), red when it failed.  A run that did
not finish, tested nothing applicable or lacks a required capability is red and says so
(D-175), whatever its tests say.

The endpoint format has no tooltip field (shields.io rejects unknown keys), so the tooltip
is the Markdown image title: ``badge.md`` (``markdown``) carries the implementation and the
version of every component it loaded (D-187), which the short message cannot.
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


def tooltip(report: Mapping[str, Any]) -> str:
    """What ran: the implementation, its version, profile and every component's version."""
    from dsh_conformance.record import components_text

    header = report.get("header", {}) or {}
    impl = (header.get("adapter") or {}).get("implementation") or {}
    name = impl.get("name") or (header.get("adapter") or {}).get("name") or "?"
    text = f"{name} {impl.get('version') or ''}".strip()
    text += f", {header.get('spec_profile', 'seed')} profile"
    components = report.get("components") or impl.get("components") or {}
    if components:
        text += "; components: " + components_text(components)
    return text


def markdown(report_json: str, url: str = "badge.json") -> str:
    """``badge.md``: the shields.io badge for *url* (where badge.json is served), its
    tooltip naming what ran."""
    from urllib.parse import quote

    from dsh_conformance.reporting.escape import for_markdown_cell

    report = json.loads(report_json)
    data = badge(report)
    title = for_markdown_cell(tooltip(report), 2000).replace('"', "'")
    alt = f"{data['label']}: {data['message']}".replace("]", "\\]")
    return f'![{alt}](https://img.shields.io/endpoint?url={quote(url, safe="")} "{title}")\n'


def render(report_json: str) -> str:
    """``badge.json`` text for the text of a JSON report."""
    return json.dumps(badge(json.loads(report_json)), indent=2) + "\n"
