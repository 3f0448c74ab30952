"""Regression diff between two runs: every move to worse, test by test (D-213).

A CI gate: ``dsh-conformance diff BASELINE NEW`` exits 1 on any move to worse of a test
judging a requirement ``--fail-on`` selects, and names the requirement ids: pass (or
absent) → a failure, expected by a manifest or not; pass → unsupported or skipped
(coverage lost); a failure → a failure for another or an added reason (another blamed
requirement, another error code anywhere in the message, or, between runs with the same
seed, another message); a crash, timeout or unreadable result.  A manifest never hides a
move: outcomes are compared as the implementation produced them (an ``xfail``'s raw
outcome).  Which implementation components changed version is listed too (D-189).
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, BROKE
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.escape import for_markdown_cell
from dsh_conformance.reporting.judgement import judge
from dsh_conformance.reporting.moves import (
    Change,
    failure_change,
    implementation_failed,
    implementation_passed,
    same_examples,
    worse_move,
)


@frozen
class RunDiff:
    new_failures: tuple[Change, ...]
    fixed: tuple[Change, ...]
    newly_skipped: tuple[Change, ...]
    added: tuple[Change, ...]
    removed: tuple[Change, ...]
    requirements: tuple[tuple[str, str, str], ...]  # (id, old status, new status)
    #: (verdict name, old label, new label, newly failing ids, newly warning ids): failing
    #: at a level that fails the verdict, warning below it (summary.Verdict)
    verdicts: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = ()
    #: tests failing or xfail on both sides for another reason (``Change.reasons``)
    changed_failures: tuple[Change, ...] = ()
    #: (package, old version, new version) of every component that changed ("absent")
    components: tuple[tuple[str, str, str], ...] = ()
    #: every move to worse, test by test (D-213): new failures (expected or not),
    #: coverage lost, changed failures
    worse: tuple[Change, ...] = ()

    @property
    def regressed(self) -> bool:
        return bool(self.worse)

    def regressions(self, gate: str = "all") -> tuple[Change, ...]:
        """The moves to worse that *gate* (summary.GATES) counts: those about a
        requirement of the selected verdicts, or about none of the catalog's; a crash,
        timeout or unreadable result always counts."""
        from dsh_conformance.reporting.gate import gated_ids, known_ids

        gated, known = gated_ids(gate), known_ids()
        return tuple(
            c
            for c in self.worse
            if c.new in {str(o) for o in BROKE}
            or set(c.requirements) & gated
            or not set(c.requirements) & known
        )

    def regressed_ids(self, gate: str = "all") -> tuple[str, ...]:
        """The requirement ids the gated moves to worse are about, sorted."""
        ids = {r for c in self.regressions(gate) for r in c.requirements}
        return tuple(sorted(ids))

    def to_json(self) -> dict[str, Any]:
        def changes(items: tuple[Change, ...]) -> list[dict[str, Any]]:
            return [c.to_json() for c in items]

        return {
            "components": [{"name": n, "old": o, "new": v} for n, o, v in self.components],
            "worse": changes(self.worse),
            "regressed_ids": list(self.regressed_ids()),
            "new_failures": changes(self.new_failures),
            "changed_failures": changes(self.changed_failures),
            "fixed": changes(self.fixed),
            "newly_skipped": changes(self.newly_skipped),
            "added": changes(self.added),
            "removed": changes(self.removed),
            "requirements": [{"id": i, "old": o, "new": n} for i, o, n in self.requirements],
            "verdicts": [
                {
                    "name": name,
                    "old": o,
                    "new": n,
                    "newly_failing": list(failing),
                    "newly_warning": list(warning),
                }
                for name, o, n, failing, warning in self.verdicts
            ],
        }

    def regressed_on(self, gate: str) -> bool:
        """Whether a test moved to worse on a requirement *gate* (summary.GATES) selects,
        even one that already failed; a verdict newly failing regresses too."""
        if self.regressions(gate):
            return True
        fresh = {name: (failing, warning) for name, _, _, failing, warning in self.verdicts}
        seed_failing, seed_warning = fresh.get("seed", ((), ()))
        profile_failing, _ = fresh.get("profile", ((), ()))
        return bool(
            seed_failing
            or (gate in ("seed-should", "all") and seed_warning)
            or (gate in ("profile", "all") and profile_failing)
        )


def component_changes(old: RunRecord, new: RunRecord) -> tuple[tuple[str, str, str], ...]:
    was, now = old.components, new.components
    return tuple(
        (name, was.get(name, "absent"), now.get(name, "absent"))
        for name in sorted(set(was) | set(now))
        if was.get(name) != now.get(name)
    )


def diff(old: RunRecord, new: RunRecord) -> RunDiff:
    before, after = old.by_nodeid(), new.by_nodeid()
    new_failures, fixed, skipped, added, removed = [], [], [], [], []
    changed_failures = []
    same = same_examples(old, new)
    worse = []
    for nodeid, test in after.items():
        prior = before.get(nodeid)
        move = worse_move(prior, test, same_examples=same)
        if move is not None:
            worse.append(move)
        change = Change(
            nodeid, str(prior.outcome) if prior else "absent", str(test.outcome), test.message
        )
        if prior is None:
            added.append(change)
            if implementation_failed(test):
                new_failures.append(change)
        elif implementation_failed(test) and not implementation_failed(prior):
            new_failures.append(change)  # pass -> xfail too: a manifest hides no move
        elif implementation_failed(prior) and implementation_passed(test):
            fixed.append(change)  # xfail -> xpass too; pass -> xpass is no move at all
        elif prior.outcome in APPLICABLE and test.outcome not in APPLICABLE:
            skipped.append(change)
        elif implementation_failed(prior) and implementation_failed(test):
            reasons = failure_change(prior, test)  # reported whole; gated in ``worse``
            if reasons:
                changed_failures.append(
                    Change(nodeid, str(prior.outcome), str(test.outcome), test.message, reasons)
                )
    for nodeid, test in before.items():
        if nodeid not in after:
            removed.append(Change(nodeid, str(test.outcome), "absent"))
    was_judged, now_judged = judge(old), judge(new)
    old_rows = {r.id: r.status for r in was_judged.rows}
    new_rows = {r.id: r.status for r in now_judged.rows}
    reqs = tuple(
        (rid, old_rows.get(rid, "absent"), new_rows.get(rid, "absent"))
        for rid in sorted(set(old_rows) | set(new_rows))
        if old_rows.get(rid) != new_rows.get(rid)
    )
    changed = []
    for was, now in zip(was_judged.verdicts, now_judged.verdicts, strict=True):
        seen = set(was.failing + was.warnings)
        failing = tuple(i for i in now.failing if i not in seen)
        warning = tuple(i for i in now.warnings if i not in seen)
        changed.append((now.name, was.label, now.label, failing, warning))
    return RunDiff(
        tuple(new_failures),
        tuple(fixed),
        tuple(skipped),
        tuple(added),
        tuple(removed),
        reqs,
        tuple(changed),
        tuple(changed_failures),
        component_changes(old, new),
        tuple(worse),
    )


def render_markdown(result: RunDiff, old: RunRecord, new: RunRecord) -> str:
    lines = [
        f"## dsh-conformance diff: {for_markdown_cell(old.adapter_label)} → "
        f"{for_markdown_cell(new.adapter_label)}",
        "",
        f"- {len(result.new_failures)} new failures (expected or not), {len(result.fixed)} "
        f"fixed, {len(result.newly_skipped)} newly skipped, {len(result.added)} added, "
        f"{len(result.removed)} removed, {len(result.changed_failures)} changed failures",
    ]
    regressed = result.regressed_ids()
    lines.append(
        f"- **{len(result.worse)} moves to worse**"
        + (f", on {', '.join(regressed)}" if regressed else "")
        if result.worse
        else "- no test moved to worse"
    )
    if result.components:
        lines.append(
            "- components changed: "
            + ", ".join(
                f"{for_markdown_cell(n)} {for_markdown_cell(o)} → {for_markdown_cell(v)}"
                for n, o, v in result.components
            )
        )
    elif new.components:
        lines.append("- components: unchanged")
    for name, was, now, failing, warning in result.verdicts:
        fresh = failing + warning
        title = "seed conformance" if name == "seed" else "profile"
        lines.append(
            f"- {title}: {was} → {now}" + (f" (newly failing: {', '.join(fresh)})" if fresh else "")
        )
    if result.worse:
        lines += [
            "",
            "### Moves to worse (what the gate sees)",
            "",
            "| test | was | now | kind | requirements | what changed |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| `{for_markdown_cell(c.nodeid, 200)}` | {c.old} | {c.new} | {c.kind} "
            f"| {', '.join(c.requirements)} | "
            + "<br>".join(
                f"{what}: {for_markdown_cell(o or '—', 300)} → {for_markdown_cell(n or '—', 300)}"
                for what, o, n in c.reasons
            )
            + " |"
            for c in result.worse
        ]
    sections = (
        ("New failures", result.new_failures),
        ("Fixed", result.fixed),
        ("Newly skipped", result.newly_skipped),
        ("Removed", result.removed),
    )
    for title, items in sections:
        if items:
            lines += ["", f"### {title}", "", "| test | was | now | message |", "|---|---|---|---|"]
            lines += [
                f"| `{for_markdown_cell(c.nodeid, 200)}` | {c.old} | {c.new} "
                f"| {for_markdown_cell(c.message, 400, breaks=True)} |"
                for c in items
            ]
    if result.changed_failures:
        lines += [
            "",
            "### Changed failures",
            "",
            "| test | was | now | what changed |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| `{for_markdown_cell(c.nodeid, 200)}` | {c.old} | {c.new} | "
            + "<br>".join(
                f"{what}: {for_markdown_cell(o or '—', 300)} → {for_markdown_cell(n or '—', 300)}"
                for what, o, n in c.reasons
            )
            + " |"
            for c in result.changed_failures
        ]
    if result.requirements:
        lines += [
            "",
            "### Requirement status changes",
            "",
            "| requirement | was | now |",
            "|---|---|---|",
        ]
        lines += [f"| {i} | {o} | {n} |" for i, o, n in result.requirements]
    return "\n".join(lines) + "\n"
