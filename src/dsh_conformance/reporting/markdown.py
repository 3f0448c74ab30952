"""Markdown for CI step summaries ($GITHUB_STEP_SUMMARY): what fails the gate first.

What can keep a run from passing (it did not finish, nothing applicable ran, a required
capability is missing: D-175) comes first, then both verdicts and the gate, then every
result that fails the gate, each with its test, requirement ids, reason and the command
that replays it (D-461).  Other failures, the run's details, the requirement table and
the reviews follow; the results the manifest expects come last (``#expected``), one row
each beside the manifest's reason.  Every string an adapter controls is inert (escape.py).
"""

from __future__ import annotations

from typing import Final

from dsh_conformance.outcomes import MISBEHAVED, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import (
    for_markdown_cell,
    for_markdown_code,
    markdown_block,
    markdown_with_code,
)
from dsh_conformance.reporting.gate import expected_as
from dsh_conformance.reporting.gateitems import GateItem
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
            lines.append(f"> {markdown_with_code(problem.hint, 1000)}")
        lines.append("")
    return lines


def verdict_table(judgement: Judgement) -> list[str]:
    """Both verdicts and the gate, one row each, the gate's expected results pointing to
    the last section."""
    lines = ["| verdict | result | requirements |", "|---|---|---|"]
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
    expected = f"[{len(gate.listed)} expected](#expected)" if gate.listed else "0 expected"
    lines.append(
        f"| gate | {'✅' if gate.passed else '❌'} {for_markdown_cell(gate.label, 1000)} | "
        f"{gate.count} unexpected, {expected} |"
    )
    return lines


def render(record: RunRecord, *, failures_limit: int = 50) -> str:
    judgement = judge(record)
    lines = [f"## dsh-conformance: {for_markdown_cell(record.adapter_label, 400)}", ""]
    lines += problem_lines(judgement)
    lines += verdict_table(judgement)
    lines += [""] + [f"**{markdown_with_code(n)}**\n" for n in judgement.notices]
    lines += gate_section(judgement, failures_limit)
    others = other_failures(judgement)
    lines += failure_section(
        judgement,
        others,
        f"Other failures ({len(others)}: no manifest entry expects them; "
        f"`--fail-on {judgement.gate.fail_on}` does not count them)",
        failures_limit,
    )
    lines += run_section(judgement)
    lines += requirement_section(judgement)
    lines += review_section(judgement)
    lines += expected_section(judgement)
    return "\n".join(lines).rstrip("\n") + "\n"


def gate_section(judgement: Judgement, limit: int) -> list[str]:
    """Every result that fails the gate, first (D-461): test, requirement ids, reason, the
    failure as a host author reads it and the replay."""
    items = judgement.gate_items
    if not items:
        return []
    lines = [f"### Fails the gate ({len(items)})", ""]
    for number, item in enumerate(items[:limit], 1):
        lines += item_block(judgement.record, number, item)
    if len(items) > limit:
        lines += [f"… and {len(items) - limit} more (report.json `gate.unexpected`).", ""]
    return lines


def item_block(record: RunRecord, number: int, item: GateItem) -> list[str]:
    about = f", {item.about}" if item.about else ""
    lines = [
        f"#### {number}. {for_markdown_code(item.subject)}",
        "",
        f"**{item.kind}** ({item.outcome}{about}): {for_markdown_cell(item.reason, 600)}",
        "",
    ]
    if item.expectation_reason:
        lines += [
            f"- manifest entry {for_markdown_code(item.expectation)}: "
            f"{for_markdown_cell(item.expectation_reason, 600)}",
            "",
        ]
    if item.test is not None:
        lines += _details(record, item.test)
    return lines


def _details(record: RunRecord, test: TestResult) -> list[str]:
    summary = "\n".join(failuretext.summary_lines(record, test))
    if len(summary) > MESSAGE_CAP:
        summary = summary[: MESSAGE_CAP - 1] + "…"
    lines = [markdown_block(summary), ""]
    tb = failuretext.traceback(test)
    if tb:  # folded: for the suite's developers, not the first thing to read
        lines += [
            "<details><summary>Python traceback</summary>",
            "",
            markdown_block(tb[:MESSAGE_CAP]),
            "",
            "</details>",
            "",
        ]
    return lines


def other_failures(judgement: Judgement) -> list[TestResult]:
    """Failures neither the gate counts nor the manifest expects (a profile failure
    under ``--fail-on seed``), in gate order (D-179)."""
    gating = {t.nodeid for t in judgement.gate.unexpected}
    return [
        t
        for _, t in judgement.ordered(
            [t for t in judgement.record.tests if t.outcome in MISBEHAVED]
        )
        if t.nodeid not in gating
    ]


def failure_section(
    judgement: Judgement, tests: list[TestResult], title: str, limit: int
) -> list[str]:
    if not tests:
        return []
    lines = [f"### {markdown_with_code(title)}", "", "| # | test | outcome | blames |"]
    lines.append("|---|---|---|---|")
    for number, test in enumerate(tests[:limit], 1):
        lines.append(
            f"| {number} | {for_markdown_code(test.nodeid)} | {test.outcome} "
            f"| {', '.join(test.blame or test.requirements)} |"
        )
    if len(tests) > limit:
        lines.append(f"\n… and {len(tests) - limit} more (see the record).")
    lines += ["", "<details><summary>Their failures in full</summary>", ""]
    for number, test in enumerate(tests[:limit], 1):
        lines += [f"#### {number}. {for_markdown_code(test.nodeid)}", ""]
        lines += [f"blames {', '.join(test.blame or test.requirements)}", ""]
        lines += _details(judgement.record, test)
    return [*lines, "</details>", ""]


def run_section(judgement: Judgement) -> list[str]:
    record = judgement.record
    header = record.header
    share = compliance(record)
    totals = record.totals()
    hypothesis = header.get("hypothesis") or {}
    lines = [
        "### Run",
        "",
        f"- suite {for_markdown_cell(str(header.get('suite_version')))}, spec "
        f"{for_markdown_cell(str(header.get('spec_version')))}, profile "
        f"{for_markdown_code(str(header.get('spec_profile')))}, Hypothesis "
        f"{for_markdown_code(str(hypothesis.get('profile')))} seed "
        f"{for_markdown_code(str(hypothesis.get('seed')))}",
        f"- ended: {for_markdown_cell(record.ending_text, 400)}",
        "- " + (", ".join(f"{n} {o}" for o in Outcome for n in [totals.get(o, 0)] if n) or "—"),
    ]
    if record.components:
        lines.append(f"- components: {for_markdown_cell(record.components_text, 4000)}")
    if share is not None:
        lines.append(f"- **{share:.1%}** of applicable tests pass")
    lines.append(f"- replay: {for_markdown_code(replay_command(record), 1000)}")
    for problem in record.expectation_problems:
        lines.append(
            f"- **expectation {for_markdown_cell(str(problem.get('kind')))}**: "
            f"{for_markdown_cell(str(problem.get('message')), 1000)}"
        )
    return [*lines, ""]


def requirement_section(judgement: Judgement) -> list[str]:
    lines = [
        "### Requirements",
        "",
        "`tests` counts the tests that passed it of those that judged it (passed or failed "
        "it); unsupported and skipped tests, and tests the adapter broke, judge nothing.",
        "",
        "| requirement | verdict | level | status | tests | title |",
        "|---|---|---|---|---|---|",
    ]
    for row in judgement.rows:
        lines.append(
            f"| {row.id} | {row.verdict} | {row.level} | {ICONS.get(row.status, row.status)} "
            f"| {row.tally} | {for_markdown_cell(row.title)} |"
        )
    return [*lines, ""]


def expected_section(judgement: Judgement, limit: int = 200) -> list[str]:
    """Each result the manifest expected, beside its reason (D-211): excused by the gate,
    a failure still failing the conformance verdict.  Last: nothing here needs acting on
    before the gate's items do."""
    gate = judgement.gate
    expected = gate.listed
    if not expected:
        return []
    lines = [
        "### Expected",
        "",
        f"{len(expected)} results the manifest expects ({gate.expected_counts}): they "
        "pass the gate; a failure still counts against conformance, an unsupported test "
        "is not judged.",
        "",
        "| test | outcome | blames | entry | reason |",
        "|---|---|---|---|---|",
    ]
    for test in expected[:limit]:
        lines.append(
            f"| {for_markdown_code(test.nodeid)} | {for_markdown_cell(expected_as(test))} "
            f"| {', '.join(test.blame or test.requirements)} "
            f"| {for_markdown_code(test.expectation)} "
            f"| {for_markdown_cell(test.expectation_reason, 600)} |"
        )
    if len(expected) > limit:
        lines.append(f"\n… and {len(expected) - limit} more (report.json).")
    return [*lines, ""]


def review_section(judgement: Judgement) -> list[str]:
    """D-199: each text beside the note's sentence it must say, and whether a host's
    review covers it; missing reviews are listed first.  Never a failure."""
    items = list(judgement.reviews)
    if not items:
        return []
    missing = [i for i in items if i.review is None]
    lines = [
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
            state = f"**missing** (sha256 {for_markdown_code(item.sha256)})"
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
    return [*lines, ""]
