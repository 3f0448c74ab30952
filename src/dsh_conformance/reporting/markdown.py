"""Markdown for CI step summaries ($GITHUB_STEP_SUMMARY): totals, per-requirement table.

What can keep a run from passing (it did not finish, nothing applicable ran, a required
capability is missing: D-175) comes first; failures come in gate order, the ones that
fail the gate first (D-179), each with its message in full (up to ``MESSAGE_CAP``
characters) and the command that replays just that test.
"""

from __future__ import annotations

from typing import Final

from dsh_conformance.outcomes import FAILING, Outcome
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import for_markdown_cell, markdown_block
from dsh_conformance.reporting.judgement import Judgement, judge
from dsh_conformance.reporting.replay import replay_command
from dsh_conformance.reporting.reviews import stale_note
from dsh_conformance.reporting.rows import compliance

#: The longest failure message shown (the record keeps up to harness.MESSAGE_LIMIT).
MESSAGE_CAP: Final = 4000

ICONS = {
    "fail": "❌ fail",
    "xfail": "❌ fail (expected by the manifest)",
    "pass": "✅ pass",
    "unsupported": "➖ unsupported",
    "not applicable": "· not applicable",
    "untested": "❔ untested",
    "inconclusive": "… inconclusive",
    "review": "👁 review",
    "MAY: cannot fail the seed verdict": "○ MAY: cannot fail the seed verdict",
    "not judged: adapter unreliable": "⛔ not judged: adapter unreliable",
}


def problem_lines(judgement: Judgement) -> list[str]:
    """The banner at the top: one GitHub alert per run problem."""
    lines: list[str] = []
    for problem in judgement.problems:
        lines += [
            "> [!CAUTION]",
            f"> **NOT A PASS ({problem.code})**: {for_markdown_cell(problem.message, 1000)}",
        ]
        if problem.hint:
            lines.append(f"> {for_markdown_cell(problem.hint, 1000)}")
        lines.append("")
    return lines


def render(record: RunRecord, *, failures_limit: int = 50) -> str:
    header = record.header
    share = compliance(record)
    totals = record.totals()
    judgement = judge(record)
    rows = list(judgement.rows)
    lines = [f"## dsh-conformance: {for_markdown_cell(record.adapter_label)}", ""]
    lines += problem_lines(judgement)
    lines += ["| verdict | result | requirements |", "|---|---|---|"]
    for verdict in judgement.verdicts:
        icon = "✅" if verdict.passed else "❌"
        failing = ", ".join(verdict.failing + verdict.warnings)
        unreliable = ", ".join(verdict.unreliable)
        lines.append(
            f"| {verdict.title} | {icon} {for_markdown_cell(verdict.headline, 1000)} "
            f"| {verdict.total}"
            + (f": failing {for_markdown_cell(failing, 2000)}" if failing else "")
            + (f"; not judged (adapter unreliable): {unreliable}" if unreliable else "")
            + " |"
        )
    gate = judgement.gate
    lines.append(
        f"| gate | {'✅' if gate.passed else '❌'} {for_markdown_cell(gate.label, 1000)} | "
        f"{len(gate.expected)} expected, {gate.count} unexpected |"
    )
    lines += [
        "",
        f"- suite {header.get('suite_version')}, spec {header.get('spec_version')}, "
        f"profile `{header.get('spec_profile')}`, Hypothesis "
        f"`{(header.get('hypothesis') or {}).get('profile')}` seed "
        f"`{(header.get('hypothesis') or {}).get('seed')}`",
        f"- ended: {for_markdown_cell(record.ending_text, 400)}",
        "- " + (", ".join(f"{n} {o}" for o in Outcome for n in [totals.get(o, 0)] if n) or "—"),
    ]
    if record.components:
        lines.append(f"- components: {for_markdown_cell(record.components_text, 4000)}")
    if share is not None:
        lines.append(f"- **{share:.1%}** of applicable tests pass")
    lines.append(f"- replay: `{for_markdown_cell(replay_command(record), 1000)}`")
    for problem in record.expectation_problems:
        lines.append(
            f"- **expectation {problem.get('kind')}**: "
            f"{for_markdown_cell(str(problem.get('message')), 1000)}"
        )
    for notice in judgement.notices:
        lines.append(f"- **{for_markdown_cell(notice, 1000)}**")
    lines += expected_section(judgement)
    bad = [t for t in record.tests if t.outcome in FAILING]
    ordered = judgement.ordered(bad)
    if bad:
        lines += [
            "",
            f"### Failures ({len(bad)}, those that fail the gate first)",
            "",
            "| # | test | outcome | fails | blames |",
            "|---|---|---|---|---|",
        ]
        for number, (why, test) in enumerate(ordered[:failures_limit], 1):
            lines.append(
                f"| {number} | `{for_markdown_cell(test.nodeid, 300)}` | {test.outcome} "
                f"| {why} | {', '.join(test.blame or test.requirements)} |"
            )
        if len(bad) > failures_limit:
            lines.append(f"\n… and {len(bad) - failures_limit} more (see the record).")
    lines += [
        "",
        "### Requirements",
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
    lines += review_section(judgement)
    if bad:
        lines += ["", "### Failure details"]
        for number, (why, test) in enumerate(ordered[:failures_limit], 1):
            summary = "\n".join(failuretext.summary_lines(record, test))
            if len(summary) > MESSAGE_CAP:
                summary = summary[: MESSAGE_CAP - 1] + "…"
            lines += [
                "",
                f"#### {number}. `{for_markdown_cell(test.nodeid, 300)}`",
                "",
                f"{test.outcome} ({why}), blames {', '.join(test.blame or test.requirements)}",
                "",
                markdown_block(summary),
                "",
            ]
            tb = failuretext.traceback(test)
            if tb:  # folded: for the suite's developers, not the first thing to read
                lines += [
                    "<details><summary>Python traceback</summary>",
                    "",
                    markdown_block(tb[:MESSAGE_CAP]),
                    "",
                    "</details>",
                ]
    return "\n".join(lines) + "\n"


def expected_section(judgement: Judgement, limit: int = 200) -> list[str]:
    """Each failure the manifest expected, beside its reason (D-211): excused by the
    gate, still failing the conformance verdict."""
    expected = judgement.gate.expected
    if not expected:
        return []
    lines = [
        "",
        f"### Expected by the manifest ({len(expected)}: they pass the gate; a failure "
        "still counts against conformance, an unsupported test is not judged)",
        "",
        "| test | outcome | blames | entry | reason |",
        "|---|---|---|---|---|",
    ]
    for test in expected[:limit]:
        raw = test.detail or str(test.outcome)
        lines.append(
            f"| `{for_markdown_cell(test.nodeid, 300)}` | {raw} "
            f"| {', '.join(test.blame or test.requirements)} "
            f"| `{for_markdown_cell(test.expectation, 300)}` "
            f"| {for_markdown_cell(test.expectation_reason, 600)} |"
        )
    if len(expected) > limit:
        lines.append(f"\n… and {len(expected) - limit} more (report.json).")
    return lines


def review_section(judgement: Judgement) -> list[str]:
    """D-199: each text beside the note's sentence it must say, and whether a host's
    review covers it; missing reviews are listed first.  Never a failure."""
    items = list(judgement.reviews)
    if not items:
        return []
    missing = [i for i in items if i.review is None]
    lines = [
        "",
        f"### Reviews ({len(items)}, {len(missing)} missing)",
        "",
        "A program cannot decide what a sentence means: a person judges each text below "
        "against the note's sentence and records the review in the manifest "
        "(`[[review]]` with the text's sha256, `by`, `why`; valid until the text changes). "
        "A review never fails a verdict.",
        "",
        "| requirement | the note's sentence | the text | review |",
        "|---|---|---|---|",
    ]
    for item in sorted(items, key=lambda i: (i.review is not None, i.requirement)):
        if item.review is None:
            state = f"**missing** (sha256 `{item.sha256}`)"
            if item.stale:
                state += "<br>" + for_markdown_cell(stale_note(item), 1000)
            if item.hints:
                state += "<br>hints: " + for_markdown_cell("; ".join(item.hints), 400)
        else:
            state = for_markdown_cell(
                f"reviewed by {item.review.get('by')}: {item.review.get('why')}", 400
            )
        lines.append(
            f"| {item.requirement} | {for_markdown_cell(item.sentence, 600, breaks=True)} "
            f"| {for_markdown_cell(item.text, 1200, breaks=True)} | {state} |"
        )
    return lines
