"""One test's move between two runs (D-213): what counts as worse, and how a failure
changed (blame, error codes, message lines), on the raw outcomes a manifest never hides."""

from __future__ import annotations

import re
from typing import Any, Final

from attrs import frozen

from dsh_conformance.outcomes import BROKE, Outcome
from dsh_conformance.record import RunRecord, TestResult


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


def implementation_failed(test: TestResult) -> bool:
    """Whether the implementation failed *test*, whatever a manifest expected: an
    ``xfail`` did, an ``xpass`` did not (it passed: issue 43)."""
    return _rank(_raw(test)) == 0


def implementation_passed(test: TestResult) -> bool:
    """Whether the implementation passed *test* (``pass``, or an ``xpass``)."""
    return _rank(_raw(test)) == 2


def _rank(outcome: Outcome) -> int:
    """2 judged and passing, 1 not judged (unsupported, skipped), 0 failing."""
    if outcome in (Outcome.PASS, Outcome.XPASS):
        return 2
    if outcome in (Outcome.UNSUPPORTED, Outcome.SKIPPED):
        return 1
    return 0


def same_examples(old: RunRecord, new: RunRecord) -> bool:
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
