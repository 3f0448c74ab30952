"""A failed test as a host author reads it, shared by every report (D-310).

First the requirement and its note sentence, what failed, the input, the expected and
the actual result as JSON, and the command that replays exactly this case; the Python
traceback comes last, folded where the format can fold.  Records written before the
``failure`` field existed fall back to the cleaned message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.failure import clean
from dsh_conformance.record import RunRecord, TestResult
from dsh_conformance.reporting.replay import replay_test_command


def checks(test: TestResult) -> Sequence[Mapping[str, Any]]:
    """The failed checks of *test* (none for a crash, a timeout or an old record)."""
    found = test.failure.get("checks") if test.failure else None
    return [c for c in found or () if isinstance(c, Mapping)]


def headline(test: TestResult) -> str:
    """One line: the first failed check's requirement and what failed."""
    found = checks(test)
    if found:
        first = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        return f"[{first.get('requirement', '')}] {first.get('message', '')}{more}".strip()
    text = str(test.failure.get("message", "")) if test.failure else ""
    return clean(text or test.message).split("\n", 1)[0]


def check_lines(check: Mapping[str, Any], indent: str = "") -> list[str]:
    """A check as lines: requirement and sentence, what failed, input, expected, actual."""
    lines = [f"{indent}{check.get('requirement', '')}: {check.get('message', '')}"]
    if check.get("sentence"):
        lines.append(f"{indent}  the note says: “{check['sentence']}”")
    for name, value in dict(check.get("input") or {}).items():
        lines.append(f"{indent}  input {name} = {value}")
    if "expected" in check:
        lines.append(f"{indent}  expected: {check['expected']}")
    if "actual" in check:
        lines.append(f"{indent}  actual:   {check['actual']}")
    return lines


def summary_lines(record: RunRecord, test: TestResult) -> list[str]:
    """Everything but the traceback, in reading order."""
    lines: list[str] = []
    found = checks(test)
    for check in found:
        lines += check_lines(check)
    if not found:
        text = str(test.failure.get("message", "")) if test.failure else ""
        lines += clean(text or test.message or "(no message)").splitlines()
    if test.request:
        lines.append(f"request in flight: {test.request}")
    lines.append(f"replay: {replay_test_command(record, test)}")
    return lines


def traceback(test: TestResult) -> str:
    """The Python traceback, cleaned (for the suite's developers)."""
    text = str(test.failure.get("traceback", "")) if test.failure else ""
    return clean(text or test.longrepr)


def plain(record: RunRecord, test: TestResult) -> str:
    """The whole failure as text: the summary, then the traceback under a rule."""
    text = "\n".join(summary_lines(record, test))
    tb = traceback(test)
    return f"{text}\n\n--- Python traceback (for the suite's developers) ---\n{tb}" if tb else text
