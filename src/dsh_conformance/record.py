"""The run record: a replayable JSON Lines file, written as the run goes.

Line 1 is a header (suite and spec versions, the adapter's handshake, Hypothesis
profile and seed, spec profile); then one line per finished test; last a footer with
totals.  Every line is flushed when written, so a crashed run keeps every completed
result, and a missing footer marks a truncated run (spec/schemas/record.json, D-124).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import IO, Any, ClassVar, Final

from attrs import field, frozen

from dsh_conformance.errors import RecordError
from dsh_conformance.model import jsstr
from dsh_conformance.outcomes import FAILING, MISBEHAVED, Outcome, broke

FORMAT: Final = "dsh-conformance-record"
FORMAT_VERSION: Final = 1


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
        )


def _request_text(request: Any) -> str:
    if request is None:
        return ""
    from dsh_conformance.reporting.escape import json_text

    return json_text(request)


@frozen
class RunRecord:
    """A whole run, read back from its JSON Lines file."""

    header: Mapping[str, Any]
    tests: tuple[TestResult, ...]
    footer: Mapping[str, Any] | None
    source: str = ""

    @property
    def truncated(self) -> bool:
        return self.footer is None

    @property
    def adapter_label(self) -> str:
        """What ran, for titles: a multi-package implementation is named by its
        components' versions, never by one package's version (D-217)."""
        adapter = self.header.get("adapter", {})
        impl = adapter.get("implementation", {})
        name = impl.get("name") or adapter.get("name") or "?"
        version = impl.get("version")
        if self.components:
            return f"{name} [{components_short(self.components)}]"
        return f"{name} {version}" if version else str(name)

    @property
    def components(self) -> dict[str, str]:
        """name -> version of every package the implementation loaded (handshake, D-187)."""
        adapter = self.header.get("adapter") or {}
        impl = adapter.get("implementation") or {} if isinstance(adapter, Mapping) else {}
        found = impl.get("components") if isinstance(impl, Mapping) else None
        if not isinstance(found, Mapping):
            return {}
        return {str(k): str(v) for k, v in sorted(found.items())}

    @property
    def components_text(self) -> str:
        """The components grouped by version, most packages first: ``a, b 0.1.1-rc.2; c 4.0.4``.

        A partial release reads at a glance: which packages moved, which stayed."""
        return components_text(self.components)

    @property
    def ending(self) -> str:
        """How the run ended: the footer's status, or ``truncated`` without a footer."""
        return "truncated" if self.footer is None else str(self.footer.get("status", ""))

    @property
    def ending_text(self) -> str:
        """The ending for people: ``interrupted by SIGINT``, ``aborted: why``…"""
        footer = self.footer or {}
        if self.footer is None:
            return "truncated: no footer (the harness was killed or crashed mid-run)"
        if self.ending == "interrupted":
            return f"interrupted by {footer.get('signal', 'a signal')}"
        reason = footer.get("reason")
        return f"{self.ending}: {reason}" if reason else self.ending

    def totals(self) -> Counter[Outcome]:
        return Counter(t.outcome for t in self.tests)

    @property
    def expectation_problems(self) -> list[dict[str, Any]]:
        return list((self.footer or {}).get("expectation_problems", []))

    @property
    def suite_problems(self) -> list[dict[str, Any]]:
        """What the harness could not write as it meant to (D-215): each a visible
        problem of the run, never a record the suite refuses."""
        return list((self.footer or {}).get("suite_problems", []))

    def by_nodeid(self) -> dict[str, TestResult]:
        return {t.nodeid: t for t in self.tests}


def components_text(components: Mapping[str, str]) -> str:
    """``components`` grouped by version (see ``RunRecord.components_text``); '' when none."""
    groups: dict[str, list[str]] = {}
    for name, version in sorted(components.items()):
        groups.setdefault(version, []).append(name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(f"{', '.join(names)} {version}" for version, names in ordered)


def components_short(components: Mapping[str, str]) -> str:
    """``components`` in a title's room: a version shared by more than two packages is
    counted (``14 packages 0.1.0-rc.7``), the others are named without their scope."""
    groups: dict[str, list[str]] = {}
    for name, version in sorted(components.items()):
        groups.setdefault(version, []).append(name.rpartition("/")[2])
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return "; ".join(
        f"{len(names)} packages {version}" if len(names) > 2 else f"{', '.join(names)} {version}"
        for version, names in ordered
    )


class RecordWriter:
    """Append records to a JSON Lines file, one flushed line at a time.

    Every line is checked against the record schema before it is written (D-215): a
    field the schema refuses is left out and named in the footer's ``suite_problems``,
    so the suite never writes a record it would refuse to read.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = self.path.open("w", encoding="utf-8", newline="\n")
        self.totals: Counter[str] = Counter()
        self.problems: list[dict[str, str]] = []

    def write(self, data: Mapping[str, Any]) -> None:
        from dsh_conformance.reporting.escape import json_text

        line, dropped = conform(data)
        where = str(data.get("nodeid") or data.get("type"))
        self.problems += [
            {"code": "record-field-dropped", "message": f"{where}: {what}"} for what in dropped
        ]
        if line.get("type") == "footer" and self.problems:
            line = {**line, "suite_problems": list(line.get("suite_problems", [])) + self.problems}
        self._file.write(json_text(line) + "\n")
        self._file.flush()

    def header(self, data: Mapping[str, Any]) -> None:
        self.write({"type": "header", "format": FORMAT, "format_version": FORMAT_VERSION, **data})

    def test(self, result: TestResult) -> None:
        self.totals[str(result.outcome)] += 1
        self.write(result.to_json())

    def footer(self, data: Mapping[str, Any]) -> None:
        self.write({"type": "footer", "totals": dict(sorted(self.totals.items())), **data})

    def close(self) -> None:
        self._file.close()


def _lines(source: str | Path) -> Iterator[tuple[int, str]]:
    if str(source) == "-":
        stream: Iterable[str] = sys.stdin
        yield from _decoded(source, enumerate(stream, 1))
        return
    path = Path(source)
    if path.is_dir():
        raise RecordError(
            "record-is-directory",
            f"{path}: is a directory, not a run record",
            hint=f"the record of a --report-dir run is {path / 'record.jsonl'}",
        )
    if not path.exists():
        raise RecordError(
            "no-such-record", f"{path}: no such file", hint="check the path", exit_status=66
        )
    try:
        with path.open(encoding="utf-8") as handle:
            yield from _decoded(source, enumerate(handle, 1))
    except OSError as exc:
        raise RecordError("unreadable-record", f"{path}: {exc.strerror or exc}") from exc


def _decoded(source: str | Path, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    number = 0
    try:
        for number, line in lines:
            yield number, line
    except UnicodeDecodeError as exc:
        raise RecordError(
            "record-not-utf8",
            f"{source}: line {number + 1} is not UTF-8 ({exc.reason} at byte {exc.start})",
            hint="is this a dsh-conformance run record (--dsh-record / --report-dir)?",
        ) from exc


@cache
def _validators() -> dict[str, Any]:
    from jsonschema import Draft202012Validator

    from dsh_conformance.spec import schema

    defs = schema("record.json")["$defs"]
    return {
        kind: Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{kind}"})
        for kind in ("header", "test", "footer")
    }


@cache
def _required(kind: str) -> frozenset[str]:
    from dsh_conformance.spec import schema

    return frozenset(schema("record.json")["$defs"][kind]["required"])


def conform(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """*data* made to follow the record schema: each field (or list item) the schema
    refuses is left out, and named in the list returned (D-215).  A line that still
    breaks the schema (a required field is wrong) is written as it is: ``load_record``
    then names it, and the harness is at fault."""
    from dsh_conformance.reporting.escape import json_text

    line = dict(data)
    kind = line.get("type")
    dropped: list[str] = []
    if kind not in ("header", "test", "footer"):
        return line, dropped
    for _ in range(50):
        try:  # the schema judges the JSON the line becomes, not Python values
            plain = jsstr.parse(json_text(line))
        except (TypeError, ValueError):
            return line, dropped
        error = next(iter(_validators()[kind].iter_errors(plain)), None)
        if error is None or not error.absolute_path:
            return line, dropped
        path = list(error.absolute_path)
        key = path[0]
        required = _required(str(kind))
        at = "/".join(str(p) for p in path)
        if len(path) >= 2 and isinstance(line.get(key), list) and isinstance(path[1], int):
            items = list(line[key])
            dropped.append(f"{at} left out ({error.message[:300]})")
            del items[path[1]]
            line[key] = items
        elif key not in required:
            dropped.append(f"{key} left out ({error.message[:300]})")
            del line[key]
        else:
            return line, dropped
    return line, dropped


def check_line(data: Any, where: str) -> dict[str, Any]:
    """Validate one record line against spec/schemas/record.json (``RecordError``)."""
    if not isinstance(data, dict) or data.get("type") not in ("header", "test", "footer"):
        raise RecordError(
            "record-not-json",
            f"{where}: not a record line (a JSON object with type header, test or footer)",
        )
    error = next(iter(_validators()[data["type"]].iter_errors(data)), None)
    if error is not None:
        at = "/".join(str(p) for p in error.absolute_path) or "(the line)"
        raise RecordError(
            "record-invalid",
            f"{where}: {data['type']} line, {at}: {error.message}",
            hint="the record does not follow spec/schemas/record.json: was it edited by hand "
            "or written by another version?",
        )
    return data


def settle_exit_status(path: Path, status: int, fail_on: str | None = None) -> None:
    """Make the footer of the record at *path* say the exit status the command really
    ends with (D-176), and the ``--fail-on`` it was gated by (every report shows that
    gate, D-211): the CLI judges the run after pytest wrote the footer."""
    text = path.read_text(encoding="utf-8")
    body, sep, last = text.rstrip("\n").rpartition("\n")
    try:
        footer = jsstr.parse(last)
    except ValueError:
        return
    if not isinstance(footer, dict) or footer.get("type") != "footer":
        return
    if footer.get("exit_status") == status and footer.get("fail_on", fail_on) == fail_on:
        return
    from dsh_conformance.reporting.escape import json_text

    footer["exit_status"] = status
    if fail_on is not None:
        footer["fail_on"] = fail_on
    new = body + sep + json_text(footer) + "\n"
    temporary = path.with_name(path.name + ".settle")
    temporary.write_text(new, encoding="utf-8", newline="\n")
    temporary.replace(path)


def load_record(source: str | Path) -> RunRecord:
    """Read a run record; raise ``RecordError`` with a stable code when it is unusable.

    Every line is checked against the shipped schema (spec/schemas/record.json) first,
    so a bad file is one clear error, never a traceback further on.
    """
    header: Mapping[str, Any] | None = None
    footer: Mapping[str, Any] | None = None
    tests: list[TestResult] = []
    seen: set[str] = set()
    for number, line in _lines(source):
        if not line.strip():
            continue
        try:
            data = jsstr.parse(line)
        except ValueError as exc:
            raise RecordError(
                "record-not-json",
                f"{source}:{number}: not JSON ({exc})",
                hint="is this a dsh-conformance run record (--dsh-record / --report-dir)?",
            ) from exc
        if (
            isinstance(data, dict)
            and "type" in data
            and header is None
            and data["type"] != "header"
        ):
            raise RecordError("missing-header", f"{source}: the first line is not a header")
        if isinstance(data, dict) and data.get("type") == "header" and data.get("format") != FORMAT:
            found = data.get("format")
            raise RecordError(
                "not-a-record",
                f"{source}: the header's format is "
                + (jsstr.stringify(found) if found is not None else "missing")
                + f", not {FORMAT}",
            )
        line_data = check_line(data, f"{source}:{number}")
        kind = line_data["type"]
        if kind != "header" and footer is not None:
            raise RecordError(
                "line-after-footer",
                f"{source}:{number}: a {kind} line after the footer",
                hint="one record per file: were two records concatenated?",
            )
        if kind == "header":
            if header is not None:
                raise RecordError(
                    "duplicate-header",
                    f"{source}:{number}: a second header (a record has exactly one)",
                    hint="one record per file: were two records concatenated?",
                )
            header = line_data
        elif kind == "test":
            result = TestResult.from_json(line_data)
            if result.nodeid in seen:
                raise RecordError("duplicate-test", f"{source}:{number}: {result.nodeid} twice")
            seen.add(result.nodeid)
            tests.append(result)
        elif kind == "footer":
            footer = line_data
    if header is None:
        raise RecordError("empty-record", f"{source}: the record is empty")
    return RunRecord(header=header, tests=tuple(tests), footer=footer, source=str(source))
