"""Markdown for CI step summaries ($GITHUB_STEP_SUMMARY): totals, per-requirement table."""

from __future__ import annotations

from dsh_conformance.outcomes import Outcome
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.escape import for_markdown_cell
from dsh_conformance.reporting.summary import (
    compliance,
    replay_command,
    requirement_rows,
    verdicts,
)

ICONS = {
    "fail": "❌ fail",
    "xfail": "⚠️ xfail",
    "pass": "✅ pass",
    "unsupported": "➖ unsupported",
    "not applicable": "· not applicable",
    "untested": "❔ untested",
    "inconclusive": "… inconclusive",
}


def render(record: RunRecord, *, failures_limit: int = 50) -> str:
    header = record.header
    share = compliance(record)
    totals = record.totals()
    rows = requirement_rows(record)
    lines = [
        f"## dsh-conformance: {for_markdown_cell(record.adapter_label)}",
        "",
        "| verdict | result | requirements |",
        "|---|---|---|",
    ]
    for verdict in verdicts(record, rows):
        icon = "✅" if verdict.passed else "❌"
        failing = ", ".join(verdict.failing + verdict.warnings)
        lines.append(
            f"| {verdict.title} | {icon} {verdict.label} | {verdict.total}"
            + (f": failing {for_markdown_cell(failing, 400)}" if failing else "")
            + " |"
        )
    lines += [
        "",
        f"- suite {header.get('suite_version')}, spec {header.get('spec_version')}, "
        f"profile `{header.get('spec_profile')}`, Hypothesis "
        f"`{(header.get('hypothesis') or {}).get('profile')}` seed "
        f"`{(header.get('hypothesis') or {}).get('seed')}`",
        "- " + (", ".join(f"{n} {o}" for o in Outcome for n in [totals.get(o, 0)] if n) or "—"),
    ]
    if record.components:
        lines.append(f"- components: {for_markdown_cell(record.components_text, 4000)}")
    if share is not None:
        lines.append(f"- **{share:.1%}** of applicable tests pass")
    lines.append(f"- replay: `{for_markdown_cell(replay_command(record), 1000)}`")
    if record.truncated:
        lines.append("- **TRUNCATED**: the record has no footer; the run did not finish")
    for problem in record.expectation_problems:
        lines.append(
            f"- **expectation {problem.get('kind')}**: "
            f"{for_markdown_cell(str(problem.get('message')), 400)}"
        )
    lines += [
        "",
        "| requirement | verdict | level | status | pass | fail | title |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.id} | {row.verdict} | {row.level} | {ICONS.get(row.status, row.status)} "
            f"| {row.counts.get(Outcome.PASS, 0)} | {len(row.failing)} "
            f"| {for_markdown_cell(row.title)} |"
        )
    bad = [
        t
        for t in record.tests
        if t.outcome in {Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.XPASS}
    ]
    if bad:
        lines += [
            "",
            "### Failures",
            "",
            "| test | outcome | blames | message |",
            "|---|---|---|---|",
        ]
        for test in bad[:failures_limit]:
            lines.append(
                f"| `{for_markdown_cell(test.nodeid, 200)}` | {test.outcome} "
                f"| {', '.join(test.blame or test.requirements)} "
                f"| {for_markdown_cell(test.message, 400, breaks=True)} |"
            )
        if len(bad) > failures_limit:
            lines.append(f"\n… and {len(bad) - failures_limit} more.")
    return "\n".join(lines) + "\n"
