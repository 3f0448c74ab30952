"""A shields.io endpoint badge for one run (``badge.json``), computed from its JSON report.

https://shields.io/badges/endpoint-badge reads ``{schemaVersion, label, message, color}``
from a URL, so a committed ``reports/badge-<run>.json`` (tools/make_reports.py) or the
``badge.json`` a run writes into ``--report-dir`` becomes a README badge.  It shows the
seed conformance verdict, never the gate (D-210): red with the seed MUSTs failing (an
expected failure fails), yellow when it passes on only the MUSTs judged (capabilities not
declared), green when every seed MUST passes.  A run that did not finish, tested nothing
applicable, lacks a required capability or whose adapter broke is red and says so
(D-175, D-212), whatever its tests say.

The endpoint format has no tooltip field (shields.io rejects unknown keys), so the tooltip
is the Markdown image title: ``badge.md`` (``markdown``) carries the implementation and the
version of every component it loaded (D-187), which the short message cannot.  shields.io
fetches an endpoint's badge.json itself, so the endpoint form needs the file's absolute
public URL (a relative ``url=badge.json`` renders nothing); ``badge.md`` is therefore the
static badge of the run unless such a URL is given (D-465).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def badge(report: Mapping[str, Any]) -> dict[str, Any]:
    """The endpoint JSON for a report as ``reporting.jsonreport`` renders it: the seed
    conformance verdict (D-210, D-214), never the gate: a manifest cannot colour it."""
    problems = [p for p in report.get("problems") or [] if p.get("code") != "suite-problem"]
    profile = str(report.get("header", {}).get("spec_profile", "seed"))
    label = "dsh-conformance" + ("" if profile == "seed" else f" ({profile})")
    if problems:
        from dsh_conformance.reporting.problems import PROBLEM_WORDS

        code = str(problems[0].get("code"))
        message, color = PROBLEM_WORDS.get(code, code), "red"
    elif report.get("truncated"):
        message, color = "incomplete run", "red"
    else:
        failing, passing, gating = _seed_counts(report)
        if failing:
            message, color = f"FAIL: {failing} of {gating} MUST failing", "red"
        elif passing < gating:
            message, color = f"pass on {passing} of {gating} MUST judged", "yellow"
        else:
            message, color = f"{passing}/{gating} MUST", "brightgreen"
    return {"schemaVersion": 1, "label": label, "message": message, "color": color}


def _seed_counts(report: Mapping[str, Any]) -> tuple[int, int, int]:
    """(failing, passing, all) seed MUSTs: the report's seed verdict, or for a report of
    an older version its MUST rows (an expected failure fails, D-210)."""
    judged = ((report.get("verdicts") or {}).get("seed") or {}).get("judged")
    if isinstance(judged, Mapping):
        return (
            int(judged.get("failing", 0)),
            int(judged.get("passing", 0)),
            int(judged.get("requirements", 0)),
        )
    musts = [
        r
        for r in report.get("requirements", [])
        if r.get("level") == "MUST" and r.get("verdict", "seed") == "seed"
    ]
    failing = sum(r.get("status") in ("fail", "xfail") for r in musts)
    passing = sum(r.get("status") in ("pass", "review") for r in musts)
    return failing, passing, len(musts)


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


def static_url(data: Mapping[str, Any]) -> str:
    """The shields.io static badge of *data*: the image itself, served from no file of
    ours, so it renders in a step summary, a pull request or a README as it is."""
    from urllib.parse import quote

    def part(text: str) -> str:  # shields.io: '-' and '_' are doubled, then URL-encoded
        return quote(str(text).replace("-", "--").replace("_", "__"), safe="")

    return (
        f"https://img.shields.io/badge/{part(data['label'])}-{part(data['message'])}"
        f"-{part(data['color'])}"
    )


def endpoint_url(url: str) -> str:
    """The shields.io endpoint badge reading badge.json at *url*, which shields.io fetches
    itself: it must be absolute and public (``https://…/badge.json``)."""
    from urllib.parse import quote, urlsplit

    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise ValueError(
            f"the endpoint badge needs the absolute public URL of badge.json, not {url!r}: "
            "shields.io fetches it (https://shields.io/badges/endpoint-badge)"
        )
    return f"https://img.shields.io/endpoint?url={quote(url, safe='')}"


def markdown(report_json: str, url: str | None = None) -> str:
    """``badge.md``: the badge as Markdown, its tooltip naming what ran.

    Without *url*, the static badge of this run (renders anywhere, frozen at this run:
    what a step summary or a pull-request comment shows).  With *url*, the absolute public
    URL where badge.json is served, the endpoint badge that follows every new badge.json
    (docs/harness.md, "Publishing the badge")."""
    from dsh_conformance.reporting.escape import for_markdown_cell

    report = json.loads(report_json)
    data = badge(report)
    title = for_markdown_cell(tooltip(report), 2000).replace('"', "'")
    alt = for_markdown_cell(f"{data['label']}: {data['message']}", 200)
    image = endpoint_url(url) if url is not None else static_url(data)
    return f'![{alt}]({image} "{title}")\n'


def render(report_json: str) -> str:
    """``badge.json`` text for the text of a JSON report."""
    return json.dumps(badge(json.loads(report_json)), indent=2) + "\n"
