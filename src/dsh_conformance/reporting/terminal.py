"""The run for a terminal (rich): the headline first, then what fails the gate.

Top to bottom (issue 43): what keeps the run from passing, both verdicts, the gate and
the coverage the handshake lost; every result that fails the gate, each with its test,
requirement ids, reason and replay; other failures; the requirements that are not
passing or not judged by a test that ran (``all_rows``: every one, D-460); the results the
manifest expects as a count pointing to ``report.md#expected`` (``all_rows``: each one);
the totals and the replay.  Adapter text is plain ``Text``, never markup.
"""

from __future__ import annotations

from typing import Final

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from dsh_conformance.outcomes import MISBEHAVED, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import for_terminal
from dsh_conformance.reporting.gate import expected_as
from dsh_conformance.reporting.gateitems import MANIFEST_PROBLEM, GateItem
from dsh_conformance.reporting.judgement import Judgement, judge
from dsh_conformance.reporting.replay import replay_command
from dsh_conformance.reporting.rows import (
    MAY_ONLY,
    NOT_APPLICABLE,
    PASS,
    REVIEW,
    UNSUPPORTED,
    RequirementRow,
    compliance,
)

STYLES: Final = {
    "fail": "bold red",
    "xfail": "red",
    "pass": "green",
    "unsupported": "cyan",
    "not applicable": "dim",
    "untested": "magenta",
    "inconclusive": "dim yellow",
    "review": "blue",
    "MAY: cannot fail the seed verdict": "dim",
    "not judged: adapter unreliable": "bold magenta",
}


#: How a status reads where it could mislead: an expected failure is a failure (D-210).
SHOWN: Final = {"xfail": "fail (expected)"}
#: Rows the short table leaves out (D-460): passing, or not judged because the handshake
#: does not declare a capability (the coverage-lost line counts those), or that cannot
#: fail a verdict.
QUIET: Final = frozenset({PASS, REVIEW, UNSUPPORTED, NOT_APPLICABLE, MAY_ONLY})
#: Failure blocks shown in full, gate items first.
FAILURE_LIMIT: Final = 30


def _text(value: str, style: str = "") -> Text:
    return Text(for_terminal(value), style=style)


def shown_rows(judgement: Judgement, all_rows: bool = False) -> list[RequirementRow]:
    """The requirements the table lists: not passing or not judged by a test that ran,
    unless *all_rows* (D-460)."""
    return [r for r in judgement.rows if all_rows or r.status not in QUIET]


def requirement_table(
    judgement: Judgement, title_width: int | None = 60, *, all_rows: bool = True
) -> Table:
    """The per-requirement table; titles cut at *title_width* (None: never cut, for
    piped output)."""
    title = Text(f"requirements: {for_terminal(judgement.record.adapter_label)}")
    table = Table(title=title, expand=False)
    table.add_column("requirement", no_wrap=True, min_width=11)
    table.add_column("verdict", no_wrap=True, min_width=7)
    table.add_column("level", no_wrap=True, min_width=11)
    table.add_column("status", no_wrap=True, min_width=14)
    table.add_column("tests", justify="right", no_wrap=True, min_width=7)
    table.add_column("title", overflow="ellipsis", no_wrap=True, max_width=title_width)
    for row in shown_rows(judgement, all_rows):
        table.add_row(
            row.id,
            row.verdict,
            row.level,
            _text(SHOWN.get(row.status, row.status), STYLES.get(row.status, "")),
            row.tally,
            _text(row.title),
        )
    return table


def table_note(judgement: Judgement, all_rows: bool) -> Text:
    """What the short table left out, by status, and how to see it."""
    hidden = [r for r in judgement.rows if r not in shown_rows(judgement, all_rows)]
    if not hidden:
        return Text("")
    counts: dict[str, int] = {}
    for row in hidden:
        counts[row.status] = counts.get(row.status, 0) + 1
    parts = ", ".join(f"{n} {status}" for status, n in counts.items())
    return Text(
        f"{len(judgement.rows) - len(hidden)} of {len(judgement.rows)} requirements listed "
        f"(not passing, or not judged by a test that ran); not listed: {parts} "
        "(--all lists every requirement)",
        style="dim",
    )


def verdict_lines(record: RunRecord, judgement: Judgement | None = None) -> RenderableType:
    """Both conformance verdicts, one headline each (what the notes say, then what the
    profile pins), then the gate: two words that never mix (D-210, D-211)."""
    judgement = judgement or judge(record)
    lines: list[RenderableType] = []
    for verdict in judgement.verdicts:
        line = Text(f"{verdict.title}: ", style="bold")
        line.append(for_terminal(verdict.headline), "bold green" if verdict.passed else "bold red")
        failing = verdict.failing + verdict.warnings
        if failing:
            shown = ", ".join(failing[:12]) + (" …" if len(failing) > 12 else "")
            line.append(f"\n  failing: {shown}", "red" if verdict.failing else "yellow")
        if verdict.unreliable:
            shown = ", ".join(verdict.unreliable[:12])
            line.append(f"\n  not judged (adapter unreliable): {shown}", "magenta")
        lines.append(line)
    lines.append(gate_lines(judgement))
    return Group(*lines)


def gate_lines(judgement: Judgement) -> RenderableType:
    """The gate, what fails it in one line each, and the coverage the handshake lost."""
    gate = judgement.gate
    line = Text("gate: ", style="bold")
    line.append(for_terminal(gate.label), "bold green" if gate.passed else "bold red")
    for item in judgement.gate_items[:FAILURE_LIMIT]:
        about = f" ({item.about})" if item.about else ""
        line.append(
            f"\n  {item.kind}{about}: {for_terminal(item.subject)}",
            "bold red",
        )
    for notice in judgement.notices:
        line.append(f"\n{for_terminal(notice)}", "yellow")
    return line


def expected_lines(judgement: Judgement, all_rows: bool = False) -> RenderableType:
    """The results the manifest expects: a count and a pointer, or each one (*all_rows*)."""
    gate = judgement.gate
    if not gate.listed:
        return Text("")
    line = Text(
        f"expected by the manifest: {gate.expected_counts} — they pass the gate, a "
        "failure still counts against conformance; each with its reason in "
        "report.md#expected" + ("" if all_rows else " (--all lists them here)"),
        style="yellow",
    )
    if all_rows:
        for test in gate.listed:
            line.append(
                f"\n  expected {expected_as(test)}: {for_terminal(test.nodeid)} — "
                f"{for_terminal(test.expectation_reason or test.expectation)}",
                "yellow",
            )
    return line


def totals_line(record: RunRecord) -> Text:
    totals = record.totals()
    parts = [f"{n} {o}" for o in Outcome for n in [totals.get(o, 0)] if n]
    share = compliance(record)
    text = Text(", ".join(parts) or "no tests ran")
    if share is not None:
        text.append(f" — {share:.1%} of applicable tests pass")
    if record.truncated:
        text.append("  [TRUNCATED: the run did not finish]", style="bold red")
    return text


def _failure_text(record: RunRecord, test: TestResult, line: Text) -> None:
    if test.failed and (test.failure or test.message):  # D-310: as a conformance failure
        for text in failuretext.summary_lines(record, test)[:12]:
            shown = text if text.startswith("replay: ") else text[:300]  # a replay is whole
            line.append("\n         " + for_terminal(shown), "dim")
    elif test.message:
        line.append("\n         " + for_terminal(test.message.splitlines()[0][:300]), "dim")


def item_block(record: RunRecord, item: GateItem) -> Text:
    """One result that fails the gate: outcome, test, requirement ids, reason, failure."""
    if item.kind == MANIFEST_PROBLEM:
        return _text(f"EXPECTATION [{item.outcome}] {item.reason}", "bold red")
    line = Text()
    line.append(f"{item.outcome.upper():8}", style=STYLES.get(item.outcome, "bold red"))
    line.append(for_terminal(item.subject))
    if item.about:
        line.append(f"  {item.about}", "bold")
    line.append(f"\n         {item.kind}: {for_terminal(item.reason)[:300]}", "bold red")
    if item.expectation_reason:
        line.append(f"\n         manifest: {for_terminal(item.expectation_reason)[:300]}")
    if item.test is not None:
        _failure_text(record, item.test, line)
    return line


def failures(judgement: Judgement, limit: int = FAILURE_LIMIT) -> RenderableType:
    """What fails the gate first, in full; then the failures no manifest expects that
    the gate does not count (D-179 order)."""
    record = judgement.record
    items = judgement.gate_items
    lines: list[RenderableType] = []
    if items:
        lines.append(Text(f"fails the gate ({len(items)}):", style="bold red"))
        lines += [item_block(record, item) for item in items[:limit]]
    gating = {t.nodeid for t in judgement.gate.unexpected}
    others = [
        t
        for _, t in judgement.ordered([t for t in record.tests if t.outcome in MISBEHAVED])
        if t.nodeid not in gating
    ]
    room = max(limit - len(items), 0)
    if others:
        lines.append(
            Text(
                f"other failures ({len(others)}: no manifest entry expects them; --fail-on "
                f"{judgement.gate.fail_on} does not count them):",
                style="bold yellow",
            )
        )
    for test in others[:room]:
        line = Text()
        line.append(f"{test.outcome.upper():8}", style=STYLES.get(str(test.outcome), "red"))
        line.append(for_terminal(test.nodeid))
        if test.blame:
            line.append(f"  blames {', '.join(test.blame)}", "bold")
        _failure_text(record, test, line)
        lines.append(line)
    hidden = max(len(items) - limit, 0) + max(len(others) - room, 0)
    if hidden:
        lines.append(Text(f"… and {hidden} more (report.md)", style="dim"))
    return Group(*lines)


def problem_lines(judgement: Judgement) -> RenderableType:
    """What keeps the run from passing, in red (D-175)."""
    return Group(
        *(_text(f"NOT A PASS ({p.code}): {p.message}", "bold red") for p in judgement.problems)
    )


def print_summary(
    record: RunRecord, console: Console, *, show_failures: bool = True, all_rows: bool = False
) -> None:
    """The run, headline first; *all_rows* (``--all``, ``-v``) lists every requirement and
    every expected result (D-460)."""
    judgement = judge(record)
    console.print(Text(f"dsh-conformance: {for_terminal(record.adapter_label)}", style="bold"))
    console.print(problem_lines(judgement))
    console.print(verdict_lines(record, judgement))
    if record.components:
        console.print(_text(f"components: {record.components_text}", "dim"))
    if show_failures:
        console.print(failures(judgement))
    if shown_rows(judgement, all_rows):
        console.print(
            requirement_table(judgement, 60 if console.is_terminal else None, all_rows=all_rows)
        )
    console.print(table_note(judgement, all_rows))
    console.print(expected_lines(judgement, all_rows))
    console.print(totals_line(record))
    missing = [i for i in judgement.reviews if i.review is None]
    if missing:  # D-199: listed, never a failure
        ids = ", ".join(dict.fromkeys(i.requirement for i in missing))
        changed = ", ".join(dict.fromkeys(i.requirement for i in missing if i.stale))
        since = f", changed since their review: {changed}" if changed else ""
        console.print(
            _text(
                f"reviews missing: {len(missing)} ({ids}{since}); see report.md for the texts",
                "blue",
            )
        )
    if any(t.outcome not in {Outcome.PASS, Outcome.UNSUPPORTED} for t in record.tests):
        console.print(_text(f"replay: {replay_command(record)}", "dim"))
