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

import re
from typing import Any, Final

from attrs import frozen

from dsh_conformance.outcomes import APPLICABLE, BROKE, FAILING, Outcome
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
    #: the requirements the move is about: what the new failure blames, or what a test
    #: that lost coverage cites
    requirements: tuple[str, ...] = ()
    #: for a move to worse: ``new failure``, ``coverage lost``, ``changed failure``
    kind: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nodeid": self.nodeid,
            "old": self.old,
            "new": self.new,
            "message": self.message,
        }
        if self.kind:
            data["kind"] = self.kind
            data["requirements"] = list(self.requirements)
        if self.reasons:
            data["changed"] = [{"what": w, "old": o, "new": n} for w, o, n in self.reasons]
        return data


#: Stable error codes inside a failure message (tests compare codes, never messages).
_CODE: Final = re.compile(r"\b(?:SESSION_REFERENCE|DSH)_[A-Z0-9_]+\b")
_ADDRESS: Final = re.compile(r"\b0x[0-9a-fA-F]+\b")
_SPACE: Final = re.compile(r"\s+")
#: Outcomes that count as "failing" for a changed-failure comparison.
_FAILED: Final = FAILING | {Outcome.XFAIL}


#: Lines of a failure message that vary between identical runs (Hypothesis' notes).
_NOISE: Final = re.compile(
    r"^\s*(Falsifying|Trying|You can reproduce|@reproduce_failure|Explanation:|"
    r"\(and \d+ more|Highest target)",
)


def normalised_message(message: str) -> str:
    """A whole failure message without what varies between identical runs (object
    addresses, runs of whitespace, Hypothesis' example notes): every line of it, so a
    second reason after an unchanged first line is a change (D-213)."""
    lines = []
    for line in message.strip().splitlines():
        if _NOISE.match(line):
            continue
        text = _SPACE.sub(" ", _ADDRESS.sub("0x…", line)).strip()
        if text:
            lines.append(text)
    return " ⏎ ".join(lines)


def _codes(message: str) -> str:
    return " ".join(sorted(set(_CODE.findall(normalised_message(message)))))


def failure_change(old: TestResult, new: TestResult) -> tuple[tuple[str, str, str], ...]:
    """How the failure of *old* differs from that of *new* (both failing or xfail): the
    whole failure set, each blamed requirement, each error code, every message line."""
    out = []
    was, now = " ".join(sorted(old.blame)), " ".join(sorted(new.blame))
    if was != now:
        out.append(("blame", was, now))
    if _codes(old.message) != _codes(new.message):
        out.append(("code", _codes(old.message), _codes(new.message)))
    if normalised_message(old.message) != normalised_message(new.message):
        out.append(("message", normalised_message(old.message), normalised_message(new.message)))
    return tuple(out)


def _raw(test: TestResult) -> Outcome:
    """What the implementation did, whatever a manifest expected: an xfail's outcome."""
    if test.outcome is Outcome.XFAIL:
        return Outcome(test.detail) if test.detail else Outcome.FAIL
    return test.outcome


def _rank(outcome: Outcome) -> int:
    """2 judged and passing, 1 not judged (unsupported, skipped), 0 failing."""
    if outcome in (Outcome.PASS, Outcome.XPASS):
        return 2
    if outcome in (Outcome.UNSUPPORTED, Outcome.SKIPPED):
        return 1
    return 0


def _same_examples(old: RunRecord, new: RunRecord) -> bool:
    """Whether two runs drew the same examples: the same seed, profile and suite, so a
    reworded failure message is the implementation's doing, not another example's."""

    def key(record: RunRecord) -> tuple[object, ...]:
        hyp = record.header.get("hypothesis") or {}
        return (hyp.get("seed"), hyp.get("profile"), record.header.get("suite_version"))

    return key(old) == key(new) and key(old)[0] is not None


def worse_move(prior: TestResult | None, test: TestResult, *, same_examples: bool) -> Change | None:
    """The move of one test to worse between two runs, or None (D-213)."""
    was = _raw(prior) if prior is not None else None
    now = _raw(test)
    old = str(prior.outcome) if prior is not None else "absent"
    blamed = tuple(test.blame or test.requirements)
    if _rank(now) == 0 and (was is None or _rank(was) > 0):
        return Change(test.nodeid, old, str(test.outcome), test.message, (), blamed, "new failure")
    if was is not None and _rank(was) == 2 and _rank(now) == 1:
        return Change(
            test.nodeid,
            old,
            str(test.outcome),
            test.message,
            (),
            test.requirements,
            "coverage lost",
        )
    if prior is not None and was is not None and _rank(was) == 0 and _rank(now) == 0:
        reasons = failure_change(prior, test)
        if not same_examples:
            reasons = tuple(r for r in reasons if r[0] != "message")
        if now in BROKE and was not in BROKE:
            reasons += (("outcome", str(was), str(now)),)
        if reasons:
            return Change(
                test.nodeid,
                old,
                str(test.outcome),
                test.message,
                reasons,
                blamed,
                "changed failure",
            )
    return None


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
    same = _same_examples(old, new)
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
            if test.outcome in _FAILED:
                new_failures.append(change)
        elif test.outcome in _FAILED and prior.outcome not in _FAILED:
            new_failures.append(change)  # pass -> xfail too: a manifest hides no move
        elif prior.outcome in FAILING | {Outcome.XFAIL} and test.outcome is Outcome.PASS:
            fixed.append(change)
        elif prior.outcome in APPLICABLE and test.outcome not in APPLICABLE:
            skipped.append(change)
        elif prior.outcome in _FAILED and test.outcome in _FAILED:
            reasons = failure_change(prior, test)  # reported whole; gated in ``worse``
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
