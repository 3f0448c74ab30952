"""Reading a record back: every line checked, every way a file can be unusable named by
a stable code (a directory, missing, not UTF-8, not JSON, not the schema, two headers,
lines after the footer, a test twice)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from dsh_conformance.errors import RecordError
from dsh_conformance.model import jsstr
from dsh_conformance.record.result import TestResult
from dsh_conformance.record.run import RunRecord
from dsh_conformance.record.schema import FORMAT, check_line


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
