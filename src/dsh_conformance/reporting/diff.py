"""Regression diff between two runs: new failures, fixes, newly skipped tests.

A CI gate: ``dsh-conformance diff BASELINE NEW`` exits non-zero on new failures.
"""

from __future__ import annotations

from typing import Any

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, FAILING, Outcome
from dsh_conformance.record import RunRecord
from dsh_conformance.reporting.escape import for_markdown_cell
from dsh_conformance.reporting.summary import requirement_rows, verdicts


@frozen
class Change:
    nodeid: str
    old: str  # an outcome, or "absent"
    new: str
    message: str = ""


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

    @property
    def regressed(self) -> bool:
        return bool(self.new_failures)

    def to_json(self) -> dict[str, Any]:
        def changes(items: tuple[Change, ...]) -> list[dict[str, str]]:
            return [
                {"nodeid": c.nodeid, "old": c.old, "new": c.new, "message": c.message}
                for c in items
            ]

        return {
            "new_failures": changes(self.new_failures),
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
        """Whether NEW fails *gate* (summary.GATES) on an id OLD did not: the same verdicts
        and levels as ``summary.gate_failed``; a new crash or timeout always regresses."""
        if any(c.new in ("crash", "timeout") for c in self.new_failures):
            return True
        fresh = {name: (failing, warning) for name, _, _, failing, warning in self.verdicts}
        seed_failing, seed_warning = fresh.get("seed", ((), ()))
        profile_failing, _ = fresh.get("profile", ((), ()))
        return bool(
            seed_failing
            or (gate in ("seed-should", "all") and seed_warning)
            or (gate in ("profile", "all") and profile_failing)
        )


def diff(old: RunRecord, new: RunRecord) -> RunDiff:
    before, after = old.by_nodeid(), new.by_nodeid()
    new_failures, fixed, skipped, added, removed = [], [], [], [], []
    for nodeid, test in after.items():
        prior = before.get(nodeid)
        change = Change(
            nodeid, str(prior.outcome) if prior else "absent", str(test.outcome), test.message
        )
        if prior is None:
            added.append(change)
            if test.outcome in FAILING:
                new_failures.append(change)
        elif test.outcome in FAILING and prior.outcome not in FAILING:
            new_failures.append(change)
        elif prior.outcome in FAILING | {Outcome.XFAIL} and test.outcome is Outcome.PASS:
            fixed.append(change)
        elif prior.outcome in APPLICABLE and test.outcome not in APPLICABLE:
            skipped.append(change)
    for nodeid, test in before.items():
        if nodeid not in after:
            removed.append(Change(nodeid, str(test.outcome), "absent"))
    old_rows = {r.id: r.status for r in requirement_rows(old)}
    new_rows = {r.id: r.status for r in requirement_rows(new)}
    reqs = tuple(
        (rid, old_rows.get(rid, "absent"), new_rows.get(rid, "absent"))
        for rid in sorted(set(old_rows) | set(new_rows))
        if old_rows.get(rid) != new_rows.get(rid)
    )
    changed = []
    for was, now in zip(verdicts(old), verdicts(new), strict=True):
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
    )


def render_markdown(result: RunDiff, old: RunRecord, new: RunRecord) -> str:
    lines = [
        f"## dsh-conformance diff: {for_markdown_cell(old.adapter_label)} → "
        f"{for_markdown_cell(new.adapter_label)}",
        "",
        f"- {len(result.new_failures)} new failures, {len(result.fixed)} fixed, "
        f"{len(result.newly_skipped)} newly skipped, {len(result.added)} added, "
        f"{len(result.removed)} removed",
    ]
    for name, was, now, failing, warning in result.verdicts:
        fresh = failing + warning
        title = "seed conformance" if name == "seed" else "profile"
        lines.append(
            f"- {title}: {was} → {now}" + (f" (newly failing: {', '.join(fresh)})" if fresh else "")
        )
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
