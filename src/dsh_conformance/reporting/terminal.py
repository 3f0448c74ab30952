"""The per-requirement table and failure list for a terminal (rich)."""

from __future__ import annotations

from typing import Final

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from dsh_conformance.outcomes import APPLICABLE, Outcome
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting import failuretext
from dsh_conformance.reporting.escape import for_terminal
from dsh_conformance.reporting.judgement import Judgement, judge
from dsh_conformance.reporting.replay import replay_command
from dsh_conformance.reporting.rows import compliance

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


def _text(value: str, style: str = "") -> Text:
    return Text(for_terminal(value), style=style)


def requirement_table(judgement: Judgement, title_width: int | None = 60) -> Table:
    """The per-requirement table; titles cut at *title_width* (None: never cut, for
    piped output)."""
    record = judgement.record
    table = Table(title=f"dsh-conformance: {for_terminal(record.adapter_label)}", expand=False)
    table.add_column("requirement", no_wrap=True, min_width=11)
    table.add_column("verdict", no_wrap=True, min_width=7)
    table.add_column("level", no_wrap=True, min_width=11)
    table.add_column("status", no_wrap=True, min_width=14)
    table.add_column("passed", justify="right", no_wrap=True, min_width=7)
    table.add_column("title", overflow="ellipsis", no_wrap=True, max_width=title_width)
    for row in judgement.rows:
        applicable = sum(n for o, n in row.counts.items() if o in APPLICABLE)
        passed = row.counts.get(Outcome.PASS, 0)
        table.add_row(
            row.id,
            row.verdict,
            row.level,
            _text(SHOWN.get(row.status, row.status), STYLES.get(row.status, "")),
            f"{passed}/{applicable}" if applicable else "–",
            _text(row.title),
        )
    return table


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


def gate_lines(judgement: Judgement, limit: int = 20) -> RenderableType:
    """The gate, then each expected failure beside its manifest reason."""
    gate = judgement.gate
    line = Text("gate: ", style="bold")
    line.append(for_terminal(gate.label), "bold green" if gate.passed else "bold red")
    for test in gate.expected[:limit]:
        raw = test.detail or str(test.outcome)
        line.append(
            f"\n  expected {raw}: {for_terminal(test.nodeid)} — "
            f"{for_terminal(test.expectation_reason or test.expectation)}",
            "yellow",
        )
    if len(gate.expected) > limit:
        line.append(f"\n  … and {len(gate.expected) - limit} more (report.md)", "dim")
    for notice in judgement.notices:
        line.append(f"\n{for_terminal(notice)}", "yellow")
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


def failures(judgement: Judgement, limit: int = 30) -> RenderableType:
    record = judgement.record
    lines: list[RenderableType] = []
    bad = [t for t in record.tests if t.outcome not in {Outcome.PASS, Outcome.SKIPPED}]
    bad = [t for t in bad if t.outcome is not Outcome.UNSUPPORTED]
    bad = [test for _, test in judgement.ordered(bad)]
    for test in bad[:limit]:
        line = Text()
        line.append(f"{test.outcome.upper():8}", style=STYLES.get(str(test.outcome), "red"))
        line.append(for_terminal(test.nodeid))
        if test.blame:
            line.append(f"  blames {', '.join(test.blame)}", "bold")
        if test.failed and (test.failure or test.message):  # D-310: as a conformance failure
            for text in failuretext.summary_lines(record, test)[:12]:
                shown = text if text.startswith("replay: ") else text[:300]  # a replay is whole
                line.append("\n         " + for_terminal(shown), "dim")
        elif test.message:
            line.append("\n         " + for_terminal(test.message.splitlines()[0][:300]), "dim")
        lines.append(line)
    if len(bad) > limit:
        lines.append(Text(f"… and {len(bad) - limit} more (see the record)", style="dim"))
    for problem in record.expectation_problems:
        lines.append(
            _text(f"EXPECTATION [{problem.get('kind')}] {problem.get('message')}", "bold red")
        )
    return Group(*lines)


def problem_lines(judgement: Judgement) -> RenderableType:
    """What keeps the run from passing, in red (D-175)."""
    return Group(
        *(_text(f"NOT A PASS ({p.code}): {p.message}", "bold red") for p in judgement.problems)
    )


def print_summary(record: RunRecord, console: Console, *, show_failures: bool = True) -> None:
    judgement = judge(record)
    console.print(problem_lines(judgement))
    console.print(requirement_table(judgement, 60 if console.is_terminal else None))
    if record.components:
        console.print(_text(f"components: {record.components_text}", "dim"))
    if show_failures:
        console.print(failures(judgement))
    console.print(totals_line(record))
    console.print(verdict_lines(record, judgement))
    console.print(problem_lines(judgement))
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
