"""Regression diff between two runs: new failures, fixes, newly skipped tests.

A CI gate: ``dsh-conformance diff BASELINE NEW`` exits non-zero on new failures.  Two more
things a host tracking upstream releases needs (D-189): which implementation components
changed version, and *changed failures*: a test failing (or xfail) on both sides for
another reason (another blamed requirement, another error code, or another normalised
first line of its message), which an outcome comparison calls "no change" although a
whole-test xfail entry may now hide a new defect.
"""

from __future__ import annotations

import re
from typing import Any, Final

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, FAILING, Outcome
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.escape import for_markdown_cell
from dsh_conformance.reporting.summary import requirement_rows, verdicts


@frozen
class Change:
    nodeid: str
    old: str  # an outcome, or "absent"
    new: str
    message: str = ""
    #: for a changed failure: what changed (``blame``, ``code``, ``message``) and the old
    #: and new value of each, e.g. ``("code", "DSH_X", "DSH_Y")``
    reasons: tuple[tuple[str, str, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nodeid": self.nodeid,
            "old": self.old,
            "new": self.new,
            "message": self.message,
        }
        if self.reasons:
            data["changed"] = [{"what": w, "old": o, "new": n} for w, o, n in self.reasons]
        return data


#: Stable error codes inside a failure message (tests compare codes, never messages).
_CODE: Final = re.compile(r"\b(?:SESSION_REFERENCE|DSH)_[A-Z0-9_]+\b")
_ADDRESS: Final = re.compile(r"\b0x[0-9a-fA-F]+\b")
_SPACE: Final = re.compile(r"\s+")
#: Outcomes that count as "failing" for a changed-failure comparison.
_FAILED: Final = FAILING | {Outcome.XFAIL}


def normalised_message(message: str) -> str:
    """The first line of a failure message without what varies between identical runs
    (object addresses, runs of whitespace): the part a changed failure is judged on."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    return _SPACE.sub(" ", _ADDRESS.sub("0x…", first)).strip()


def _codes(message: str) -> str:
    return " ".join(sorted(set(_CODE.findall(normalised_message(message)))))


def failure_change(old: TestResult, new: TestResult) -> tuple[tuple[str, str, str], ...]:
    """How the failure of *old* differs from that of *new* (both failing or xfail)."""
    out = []
    was, now = " ".join(sorted(old.blame)), " ".join(sorted(new.blame))
    if was != now:
        out.append(("blame", was, now))
    if _codes(old.message) != _codes(new.message):
        out.append(("code", _codes(old.message), _codes(new.message)))
    if normalised_message(old.message) != normalised_message(new.message):
        out.append(("message", normalised_message(old.message), normalised_message(new.message)))
    return tuple(out)


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

    @property
    def regressed(self) -> bool:
        return bool(self.new_failures) or any(_gating(c) for c in self.changed_failures)

    def to_json(self) -> dict[str, Any]:
        def changes(items: tuple[Change, ...]) -> list[dict[str, Any]]:
            return [c.to_json() for c in items]

        return {
            "components": [{"name": n, "old": o, "new": v} for n, o, v in self.components],
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
        """Whether NEW fails *gate* (summary.GATES) on an id OLD did not: the same verdicts
        and levels as ``summary.gate_failed``; a new crash or timeout always regresses."""
        if any(c.new in ("crash", "timeout") for c in self.new_failures):
            return True
        if any(_gating(c) for c in self.changed_failures):
            return True  # another requirement blamed, or another error code (D-189)
        fresh = {name: (failing, warning) for name, _, _, failing, warning in self.verdicts}
        seed_failing, seed_warning = fresh.get("seed", ((), ()))
        profile_failing, _ = fresh.get("profile", ((), ()))
        return bool(
            seed_failing
            or (gate in ("seed-should", "all") and seed_warning)
            or (gate in ("profile", "all") and profile_failing)
        )


def _gating(change: Change) -> bool:
    """A changed failure regresses when it blames another requirement or fails with
    another code; a reworded message alone is reported, not gated."""
    return any(what in ("blame", "code") for what, _, _ in change.reasons)


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
        elif prior.outcome in _FAILED and test.outcome in _FAILED:
            reasons = failure_change(prior, test)
            if reasons:
                changed_failures.append(
                    Change(nodeid, str(prior.outcome), str(test.outcome), test.message, reasons)
                )
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
        tuple(changed_failures),
        component_changes(old, new),
    )


def render_markdown(result: RunDiff, old: RunRecord, new: RunRecord) -> str:
    lines = [
        f"## dsh-conformance diff: {for_markdown_cell(old.adapter_label)} → "
        f"{for_markdown_cell(new.adapter_label)}",
        "",
        f"- {len(result.new_failures)} new failures, {len(result.fixed)} fixed, "
        f"{len(result.newly_skipped)} newly skipped, {len(result.added)} added, "
        f"{len(result.removed)} removed, {len(result.changed_failures)} changed failures",
    ]
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
