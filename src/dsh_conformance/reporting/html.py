"""A self-contained HTML matrix: requirements × adapters, filterable.

One file, no network: inline CSS and a few lines of script to filter by text and
status.  Every requirement row shows its seed sentence; every cell lists the tests
behind it.  All adapter text is HTML-escaped after control characters are spelled out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.escape import for_html
from dsh_conformance.reporting.summary import STATUS_ORDER, RequirementRow, requirement_rows

_STYLE: Final = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ddd;padding:4px 6px;
vertical-align:top}th{background:#f4f4f4;position:sticky;top:0}
.fail{background:#fdd}.xfail{background:#ffe9b3}.pass{background:#dfd}
.unsupported{background:#def}.untested{background:#f3e0f7}
.not-applicable{background:#f6f6f6;color:#777}
details summary{cursor:pointer}blockquote{margin:.3em 0;color:#555;font-style:italic}
.controls{margin:1em 0}.controls input{width:24em}code{font-size:12px}
"""
#: No network, no external anything: the report is one inert file.
_CSP: Final = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
_SCRIPT: Final = """
function applyFilter(){const q=document.getElementById('q').value.toLowerCase();
const s=document.getElementById('s').value;
for(const tr of document.querySelectorAll('tbody tr')){
const okText=!q||tr.textContent.toLowerCase().includes(q);
const okStatus=!s||tr.dataset.statuses.split(' ').includes(s);
tr.hidden=!(okText&&okStatus);}}
"""


def _cell(row: RequirementRow | None) -> str:
    if row is None:
        return '<td class="not-applicable">—</td>'
    cls = row.status.replace(" ", "-")
    tests = "".join(
        f"<li><code>{for_html(t.nodeid)}</code> {for_html(str(t.outcome))}"
        + (f"<br><small>{for_html(t.message[:300])}</small>" if t.message else "")
        + "</li>"
        for t in row.tests
    )
    details = f"<details><summary>{len(row.tests)} tests</summary><ul>{tests}</ul></details>"
    return f'<td class="{cls}">{for_html(row.status)}{details if row.tests else ""}</td>'


def render(records: Sequence[RunRecord], title: str = "dsh-conformance") -> str:
    per_run = [{r.id: r for r in requirement_rows(record)} for record in records]
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
        + (" <b>TRUNCATED</b>" if r.truncated else "")
        + "</li>"
        for r in records
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{for_html(title)}</title>
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<style>{_STYLE}</style></head><body>
<h1>{for_html(title)}</h1><ul>{runs}</ul>
<div class="controls"><input id="q" placeholder="filter: id, title, test…" oninput="applyFilter()">
<select id="s" onchange="applyFilter()"><option value="">any status</option>{options}</select></div>
<table><thead><tr><th>requirement</th>{heads}</tr></thead>
<tbody>{"".join(body)}</tbody></table>
<script>{_SCRIPT}</script></body></html>
"""
