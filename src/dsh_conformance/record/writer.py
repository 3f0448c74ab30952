"""Writing a record: one flushed line at a time as the run goes, and the footer's exit
status settled once the CLI has judged the run (D-124, D-176)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dsh_conformance.model import jsstr
from dsh_conformance.record.schema import FORMAT, FORMAT_VERSION, conform

if TYPE_CHECKING:
    from dsh_conformance.record.result import TestResult  # a value, never built here


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
    gated = fail_on is None or footer.get("fail_on") == fail_on  # absent: not yet said
    if footer.get("exit_status") == status and gated:
        return
    from dsh_conformance.reporting.escape import json_text

    footer["exit_status"] = status
    if fail_on is not None:
        footer["fail_on"] = fail_on
    new = body + sep + json_text(footer) + "\n"
    temporary = path.with_name(path.name + ".settle")
    temporary.write_text(new, encoding="utf-8", newline="\n")
    temporary.replace(path)
