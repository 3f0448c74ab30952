"""One finished test as the record keeps it: its outcome, what it blames and judged.

A ``TestResult`` is both the line the harness writes and what every report reads: the
questions a verdict asks of one test (did it fail, did the adapter break, does it judge
this requirement) are answered here, once (D-160, D-210, D-212, D-330).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from attrs import field, frozen

from dsh_conformance.model import jsstr
from dsh_conformance.outcomes import FAILING, MISBEHAVED, Outcome, broke


def _tuple(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


def _optional_tuple(items: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if items is None else tuple(items)


def _maps(items: Iterable[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(items)


@frozen
class TestResult:
    """One finished test."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name

    nodeid: str
    outcome: Outcome = field(converter=Outcome)
    requirements: tuple[str, ...] = field(default=(), converter=_tuple)
    capabilities: tuple[str, ...] = field(default=(), converter=_tuple)
    duration: float = 0.0
    message: str = ""
    #: The raw outcome behind an ``xfail`` (``fail``, ``crash``…), else empty.
    detail: str = ""
    #: The id of the expectation-manifest entry that applied, else empty.
    expectation: str = ""
    longrepr: str = ""
    #: The requirements a failing test blames (its failed checks, D-160), else empty.
    blame: tuple[str, ...] = field(default=(), converter=_tuple)
    #: JSON of the request in flight at an adapter crash or timeout (D-180), else empty.
    request: str = ""
    #: Reviews the test asked for (checks.review, D-199): requirement, sha256, text,
    #: sentence, hints, and ``review`` ({by, why}) when the host's manifest records one.
    reviews: tuple[Mapping[str, Any], ...] = field(default=(), converter=_maps)
    #: The manifest entry's ``reason`` when an entry applied (D-211), else empty.
    expectation_reason: str = ""
    #: A failure as a conformance failure (failure.py): ``checks`` (requirement, sentence,
    #: message, input, expected, actual: JSON texts), ``replay``, ``traceback``; or, for a
    #: crash or timeout, ``message`` and no checks.  Empty unless the test failed.
    failure: Mapping[str, Any] = field(factory=dict)
    #: For a failed test, the cited requirements it concluded on (D-330): those it blames
    #: and those whose every check ran and passed.  None in a record written before the
    #: field (a failed test then judges only what it blames).
    judged: tuple[str, ...] | None = field(default=None, converter=_optional_tuple)
    #: Checks that could not read a field (D-521, D-522): requirement, field, expected,
    #: seen, reason, by (``host``: its result; ``suite``: a reading error of the suite's).
    #: Such a requirement is not judged by this test; the test's other checks are.
    unjudged: tuple[Mapping[str, Any], ...] = field(default=(), converter=_maps)
    #: A property test its ``xfail`` entry expects to fail whose examples found no
    #: failure (D-422): it passed, and the gate lists it as not reproduced.
    not_reproduced: bool = False
    #: The ids the applied entry lets a failure blame (D-421), when it names them: of a
    #: failure's blame, only the others are unexpected.
    expectation_blames: tuple[str, ...] = field(default=(), converter=_tuple)

    @property
    def failed(self) -> bool:
        """Whether the test failed (an ``xfail`` failed too, as its manifest said)."""
        return self.outcome in FAILING or self.outcome is Outcome.XFAIL or bool(self.detail)

    @property
    def broke(self) -> bool:
        """The adapter or protocol broke (crash, timeout, unreadable result), expected or
        not: the test judges no requirement (D-212)."""
        return broke(self.outcome, self.detail)

    @property
    def misbehaved(self) -> bool:
        """The implementation failed a check or answered a typed error where a result was
        due, whether or not a manifest expected it: what conformance counts (D-210)."""
        if self.outcome is Outcome.XFAIL:  # a bare xfail (no raw outcome) failed
            return not self.detail or Outcome(self.detail) in MISBEHAVED
        return self.outcome in MISBEHAVED

    def judges(self, requirement: str) -> bool:
        """Whether this result says anything about *requirement*.

        A failed test judges what it blames and what its checks ran and passed (D-330):
        a requirement it cites whose check never ran (a hard failure stopped the test
        first) is neither passed nor failed by it.  A record without ``judged`` (an
        older one) judges only what it blames.  A test the adapter broke judges nothing
        (D-212).
        """
        if self.broke:
            return False
        if requirement in self.blame:
            return True
        if self.unreadable_for(requirement):
            return False
        if not (self.failed and self.blame):
            return True
        return self.judged is not None and requirement in self.judged

    def unreadable_for(self, requirement: str) -> bool:
        """Whether a check of *requirement* could not read a field here (D-522): this test
        is an unreadable path of it, neither a pass nor a failure."""
        return requirement not in self.blame and any(
            u.get("requirement") == requirement for u in self.unjudged
        )

    def passes(self, requirement: str) -> bool:
        """Whether this failed test still passes *requirement*: it cites it, its checks
        of it ran and passed, and it does not blame it (D-330)."""
        return (
            self.failed
            and not self.broke
            and bool(self.blame)
            and requirement not in self.blame
            and not self.unreadable_for(requirement)
            and self.judged is not None
            and requirement in self.judged
        )

    def outcome_for(self, requirement: str) -> Outcome:
        """The outcome as *requirement* sees it: ``pass`` where a failed test passes it."""
        return Outcome.PASS if self.passes(requirement) else self.outcome

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "type": "test",
            "nodeid": self.nodeid,
            "outcome": str(self.outcome),
            "requirements": list(self.requirements),
            "capabilities": list(self.capabilities),
            "duration": round(self.duration, 6),
            "message": self.message,
        }
        for key in ("detail", "expectation", "expectation_reason", "longrepr"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if self.blame:
            data["blame"] = list(self.blame)
        if self.judged is not None:
            data["judged"] = list(self.judged)
        if self.not_reproduced:
            data["not_reproduced"] = True
        if self.expectation_blames:
            data["expectation_blames"] = list(self.expectation_blames)
        if self.request:
            data["request"] = jsstr.parse(self.request)
        if self.reviews:
            data["reviews"] = [dict(r) for r in self.reviews]
        if self.failure:
            data["failure"] = dict(self.failure)
        if self.unjudged:
            data["unjudged"] = [dict(u) for u in self.unjudged]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        return cls(
            nodeid=str(data["nodeid"]),
            outcome=Outcome(data["outcome"]),
            requirements=[str(r) for r in data.get("requirements", [])],
            capabilities=[str(c) for c in data.get("capabilities", [])],
            duration=float(data.get("duration", 0.0)),
            message=str(data.get("message", "")),
            detail=str(data.get("detail", "")),
            expectation=str(data.get("expectation", "")),
            expectation_reason=str(data.get("expectation_reason", "")),
            longrepr=str(data.get("longrepr", "")),
            blame=[str(r) for r in data.get("blame", [])],
            request=_request_text(data.get("request")),
            reviews=[dict(r) for r in data.get("reviews", [])],
            failure=dict(data.get("failure") or {}),
            judged=None if data.get("judged") is None else [str(r) for r in data["judged"]],
            unjudged=[dict(u) for u in data.get("unjudged", [])],
            not_reproduced=bool(data.get("not_reproduced", False)),
            expectation_blames=[str(r) for r in data.get("expectation_blames", [])],
        )


def _request_text(request: Any) -> str:
    if request is None:
        return ""
    from dsh_conformance.reporting.escape import json_text

    return json_text(request)
