"""A self-contained HTML matrix: requirements × adapters, filterable.

One file, no network: inline CSS and a few lines of script to filter by text and
status.  Every requirement row shows its seed sentence; every cell lists the tests
behind it.  All adapter text is HTML-escaped after control characters are spelled out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dsh_conformance.outcomes import MISBEHAVED
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import for_html, html_with_code
from dsh_conformance.reporting.gate import expected_as
from dsh_conformance.reporting.gateitems import GateItem
from dsh_conformance.reporting.judgement import Judgement, judge
from dsh_conformance.reporting.replay import replay_test_command
from dsh_conformance.reporting.reviews import review_state
from dsh_conformance.reporting.rows import (
    STATUS_ORDER,
    RequirementRow,
    compliance,
)

_STYLE: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:4px 6px;
vertical-align:top}th{background:#f4f4f4;position:sticky;top:0}
.fail{background:#fdd}.xfail{background:#ffe9b3}.pass{background:#dfd}
.unsupported{background:#def}.untested{background:#f3e0f7}
.not-applicable{background:#f6f6f6;color:#777}
details summary{cursor:pointer}blockquote{margin:.3em 0;color:#555;font-style:italic}
.controls{margin:1em 0}.controls input{width:24em}code{font-size:12px}
.inconclusive{background:#f7f3e3}.verdicts td{font-size:15px}
.ok{color:#060;font-weight:bold}.bad{color:#b00;font-weight:bold}
.banner{background:#b00;color:#fff;padding:.6em 1em;font-size:16px;margin:.5em 0}
pre{white-space:pre-wrap;font-size:12px;background:#f8f8f8;padding:.5em;margin:.3em 0}
.check{margin:.3em 0 .3em 1em}table.io{width:auto}table.io th{position:static;text-align:left}
code.json{white-space:pre-wrap;word-break:break-all}.replay{margin:.2em 0}
"""
#: No network, no external anything: the report is one inert file.
_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
_SCRIPT: Final = """
function applyFilter(){const q=document.getElementById('q').value.toLowerCase();
const s=document.getElementById('s').value;
for(const tr of document.querySelectorAll('#requirements tbody tr')){
const okText=!q||tr.textContent.toLowerCase().includes(q);
const okStatus=!s||tr.dataset.statuses.split(' ').includes(s);
tr.hidden=!(okText&&okStatus);}}
"""


def _line(test: TestResult) -> str:
    return failuretext.headline(test) if test.failed else test.message


def _cell(row: RequirementRow | None) -> str:
    if row is None:
        return '<td class="not-applicable">—</td>'
    cls = row.status.replace(" ", "-")
    tests = "".join(
        f"<li><code>{for_html(t.nodeid)}</code> {for_html(str(t.outcome))}"
        + (f"<br><small>{for_html(_line(t)[:300])}</small>" if t.message else "")
        + "</li>"
        for t in row.tests
    )
    more = f", {row.not_judging} judged nothing" if row.not_judging else ""
    summary = f"{row.tally} tests pass{more}"  # the one count every report shows (D-462)
    details = f"<details><summary>{summary}</summary><ul>{tests}</ul></details>"
    return f'<td class="{cls}">{for_html(row.status)}{details if row.tests else ""}</td>'


def _item(record: RunRecord, item: GateItem) -> str:
    """One result that fails the gate (D-461): kind, test, requirement ids, reason; then
    the failure as ``_failure`` shows it."""
    about = f", {for_html(item.about)}" if item.about else ""
    head = (
        f'<li class="failure gate-item"><b class="bad">{for_html(item.kind)}</b> '
        f"<code>{for_html(item.subject)}</code> {for_html(item.outcome)}{about}"
        f'<p class="reason">{for_html(item.reason)}</p>'
        + (
            f"<p>manifest entry <code>{for_html(item.expectation)}</code>: "
            f"{for_html(item.expectation_reason)}</p>"
            if item.expectation_reason
            else ""
        )
    )
    if item.test is None:
        return head + "</li>"
    return _failure(record, "", item.test, head)


def _failure(record: RunRecord, why: str, test: TestResult, head: str = "") -> str:
    """One failure as a host author reads it (D-310): each failed check's requirement and
    note sentence, input, expected and actual as JSON, the replay; the traceback folded."""
    parts = [
        head
        or f'<li class="failure"><code>{for_html(test.nodeid)}</code> '
        f"{for_html(str(test.outcome))} ({for_html(why)}), blames "
        f"<b>{for_html(', '.join(test.blame or test.requirements))}</b>"
    ]
    found = failuretext.checks(test)
    for check in found:
        rows = [("input " + str(k), str(v)) for k, v in dict(check.get("input") or {}).items()]
        rows += [(k, str(check[k])) for k in ("expected", "actual") if k in check]
        table = "".join(
            f'<tr><th>{for_html(k)}</th><td><code class="json">{for_html(v)}</code></td></tr>'
            for k, v in rows
        )
        sentence = str(check.get("sentence", ""))
        parts.append(
            f'<div class="check"><b>{for_html(str(check.get("requirement", "")))}</b>: '
            f"{for_html(str(check.get('message', '')))}"
            + (f"<blockquote>{for_html(sentence)}</blockquote>" if sentence else "")
            + (f'<table class="io">{table}</table>' if table else "")
            + "</div>"
        )
    if not found:
        parts.append(f'<pre class="message">{for_html(failuretext.headline(test))}</pre>')
    if test.request:
        parts.append(f"<small>request in flight: <code>{for_html(test.request)}</code></small>")
    parts.append(
        f'<p class="replay">replay: <code>{for_html(replay_test_command(record, test))}</code></p>'
    )
    tb = failuretext.traceback(test)
    if tb:
        parts.append(
            f"<details><summary>Python traceback</summary><pre>{for_html(tb[:8000])}</pre>"
            "</details>"
        )
    return "".join(parts) + "</li>"


def _verdict_rows(judgement: Judgement, anchor: str) -> str:
    cells = "".join(
        f'<tr><td>{for_html(v.title)}</td><td class="{"ok" if v.passed else "bad"}">'
        f"{for_html(v.headline)}</td><td>{v.total} requirements"
        + (
            f"; failing: {for_html(', '.join(v.failing + v.warnings))}"
            if v.failing or v.warnings
            else ""
        )
        + (
            f"; not judged (adapter unreliable): {for_html(', '.join(v.unreliable))}"
            if v.unreliable
            else ""
        )
        + "</td></tr>"
        for v in judgement.verdicts
    )
    gate = judgement.gate
    expected = (
        f'<a href="#{anchor}">{len(gate.listed)} expected</a>' if gate.listed else "0 expected"
    )
    return cells + (
        f'<tr><td>gate</td><td class="{"ok" if gate.passed else "bad"}">'
        f"{for_html(gate.label)}</td><td>{gate.count} unexpected, {expected}</td></tr>"
    )


def _overview(judgement: Judgement, anchor: str) -> str:
    """What a reader needs first: what keeps the run from passing, both verdicts and the
    gate, the coverage lost, then what fails the gate and the other failures."""
    record = judgement.record
    share = compliance(record)
    totals = ", ".join(f"{n} {o}" for o, n in sorted(record.totals().items()))
    notices = "".join(f"<p><b>{html_with_code(n)}</b></p>" for n in judgement.notices)
    items = judgement.gate_items
    gating = {t.nodeid for t in judgement.gate.unexpected}
    misbehaved = [t for t in record.tests if t.outcome in MISBEHAVED and t.nodeid not in gating]
    others = judgement.ordered(misbehaved)
    banners = "".join(
        f'<p class="banner"><b>NOT A PASS ({for_html(p.code)})</b>: {for_html(p.message)}'
        + (f"<br><small>{html_with_code(p.hint)}</small>" if p.hint else "")
        + "</p>"
        for p in judgement.problems
    )
    return (
        f"<h2>{for_html(record.adapter_label)}</h2>{banners}"
        f'<table class="verdicts">{_verdict_rows(judgement, anchor)}</table>{notices}'
        + (
            f"<h3>Fails the gate ({len(items)})</h3><ol>"
            + "".join(_item(record, item) for item in items[:100])
            + "</ol>"
            if items
            else "<p>Nothing fails the gate.</p>"
        )
        + (
            f"<h3>Other failures ({len(others)}: no manifest entry expects them; "
            f"<code>--fail-on {for_html(judgement.gate.fail_on)}</code> does not count them)"
            "</h3><ol>" + "".join(_failure(record, why, t) for why, t in others[:100]) + "</ol>"
            if others
            else ""
        )
        + f"<p>{for_html(totals or 'no tests ran')}"
        + (f" — {share:.1%} of applicable tests pass" if share is not None else "")
        + (" — <b>TRUNCATED</b>" if record.truncated else "")
        + "</p>"
        + _reviews(judgement)
    )


def _expected(judgement: Judgement, anchor: str) -> str:
    """The results the manifest expects, each beside its reason: last (D-461)."""
    gate = judgement.gate
    if not gate.listed:
        return ""
    rows = "".join(
        f"<li><code>{for_html(t.nodeid)}</code> {for_html(expected_as(t))}, "
        f"blames <b>{for_html(', '.join(t.blame or t.requirements))}</b>: "
        f"{for_html(t.expectation_reason or t.expectation)}</li>"
        for t in gate.listed[:200]
    )
    return (
        f'<h3 id="{anchor}">Expected by the manifest: '
        f"{for_html(judgement.record.adapter_label)} ({len(gate.listed)}: they pass the "
        "gate; a failure still counts against conformance, an unsupported test is not "
        f"judged)</h3><ul>{rows}</ul>"
    )


def _reviews(judgement: Judgement) -> str:
    """D-199: each text beside the note's sentence, missing reviews first; never a failure."""
    items = sorted(judgement.reviews, key=lambda i: (i.review is not None, i.requirement))
    if not items:
        return ""
    missing = sum(1 for i in items if i.review is None)
    rows = "".join(
        f"<li><b>{for_html(i.requirement)}</b>: {for_html(review_state(i))}"
        f"<blockquote>{for_html(i.sentence)}</blockquote><pre>{for_html(i.text[:4000])}</pre>"
        + (f"<small>hints: {for_html('; '.join(i.hints))}</small>" if i.hints else "")
        + "</li>"
        for i in items
    )
    return (
        f"<h3>Reviews ({len(items)}, {missing} missing)</h3><p>A person judges each text "
        "against the note's sentence and records the review in the manifest; a review "
        f"never fails a verdict.</p><ul>{rows}</ul>"
    )


def render(records: Sequence[RunRecord], title: str = "dsh-conformance") -> str:
    judgements = [judge(record) for record in records]
    anchors = ["expected" if i == 0 else f"expected-{i + 1}" for i in range(len(records))]
    overview = "".join(_overview(j, a) for j, a in zip(judgements, anchors, strict=True))
    expected = "".join(_expected(j, a) for j, a in zip(judgements, anchors, strict=True))
    per_run = [{r.id: r for r in judgement.rows} for judgement in judgements]
    ids: list[str] = []
    for run_rows in per_run:
        ids += [i for i in run_rows if i not in ids]
    ids.sort(key=lambda i: (i.split("-")[0], i))
    heads = "".join(f"<th>{for_html(r.adapter_label)}</th>" for r in records)
    body = []
    for rid in ids:
        rows = [run.get(rid) for run in per_run]
        first = next(r for r in rows if r is not None)
        statuses = " ".join(sorted({r.status.replace(" ", "-") for r in rows if r}))
        quote = f"<blockquote>{for_html(first.quote)}</blockquote>" if first.quote else ""
        body.append(
            f'<tr data-statuses="{statuses}"><td><b>{for_html(rid)}</b> '
            f"<small>{for_html(first.level)}</small><br>{for_html(first.title)}"
            f"<details><summary>seed sentence</summary>{quote}</details></td>"
            + "".join(_cell(r) for r in rows)
            + "</tr>"
        )
    options = "".join(f'<option value="{s.replace(" ", "-")}">{s}</option>' for s in STATUS_ORDER)
    runs = "".join(
        f"<li>{for_html(r.adapter_label)}: spec {for_html(str(r.header.get('spec_version')))}"
        f", profile {for_html(str(r.header.get('spec_profile')))}, started "
        f"{for_html(str(r.header.get('started')))}"
        + (f"<br><small>components: {for_html(r.components_text)}</small>" if r.components else "")
        + (f" <b>{for_html(r.ending_text.upper())}</b>" if r.ending != "complete" else "")
        + "</li>"
        for r in records
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{for_html(title)}</title>
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<style>{_STYLE}</style></head><body>
<h1>{for_html(title)}</h1>{overview}<h2>Requirements</h2><ul>{runs}</ul>
<div class="controls"><input id="q" placeholder="filter: id, title, test…" oninput="applyFilter()">
<select id="s" onchange="applyFilter()"><option value="">any status</option>{options}</select></div>
<table id="requirements"><thead><tr><th>requirement</th>{heads}</tr></thead>
<tbody>{"".join(body)}</tbody></table>{expected}
<script>{_SCRIPT}</script></body></html>
"""
