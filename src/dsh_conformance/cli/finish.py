"""The end of a ``run``: its exit status, the footer that says it, and its reports.

pytest writes the footer before the gate is applied; the CLI judges the record, makes
the footer say the status the command exits with (D-176), prints the record and writes
the reports (``--report-dir``), then the run's problems as one-line diagnostics.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dsh_conformance.cli._common import _consoles, _fail, _print_error, _print_record
from dsh_conformance.errors import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_SOFTWARE,
    EX_USAGE,
)

if TYPE_CHECKING:
    from dsh_conformance.options import RunOptions


def write_reports(record_path: Path, report_dir: Path) -> list[Path]:
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting import html, jsonreport, junit, markdown

    record = load_record(record_path)
    outputs = {
        "report.md": markdown.render(record),
        "junit.xml": junit.render(record),
        "report.html": html.render([record]),
        "report.json": jsonreport.render(record),
    }
    from dsh_conformance import badge

    outputs["badge.json"] = badge.render(outputs["report.json"])
    outputs["badge.md"] = badge.markdown(outputs["report.json"])
    written = []
    for name, text in outputs.items():
        path = report_dir / name
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail("cannot-write", f"{path}: {exc.strerror or exc}", status=EX_CANTCREAT)
        written.append(path)
    return written


def list_selection(options: RunOptions, fmt: str) -> None:
    """``--collect-only``: the tests the selection would run, one per line (stdout)."""
    from dsh_conformance import runner

    _, err = _consoles()
    tests = runner.selected(options)
    if fmt == "json":
        from dsh_conformance.reporting.escape import json_text

        rows = [{"id": t.nodeid, "requirements": list(t.requirements)} for t in tests]
        click.echo(json_text(rows))
    else:
        from dsh_conformance.reporting.escape import for_terminal

        for test in tests:
            click.echo(f"{for_terminal(test.nodeid)}\t{' '.join(test.requirements)}")
    err.print(f"{len(tests)} tests would run", markup=False, highlight=False)
    if not tests:
        sys.exit(5)


def finish_run(
    status: int,
    record_path: Path,
    report_dir: Path | None,
    fmt: str,
    out: Any,
    err: Any,
    fail_on: str = "seed",
) -> None:
    from dsh_conformance import signals
    from dsh_conformance.record import load_record, settle_exit_status
    from dsh_conformance.reporting.summary import run_exit_status, run_problems

    received = signals.received()
    if received is not None and not record_path.exists():
        _fail(
            "interrupted",
            f"the run was interrupted by {received} before any test ran",
            status=EX_INTERRUPTED,
        )
    if received is None and (status in (EX_SOFTWARE, EX_CONFIG) or not record_path.exists()):
        reason = ""
        if record_path.exists():
            footer = load_record(record_path).footer or {}
            reason = str(footer.get("reason", ""))
            settle_exit_status(record_path, EX_CONFIG if status == EX_CONFIG else EX_SOFTWARE)
            if report_dir is not None:  # a CI publisher shows red and says why, not "no results"
                for path in write_reports(record_path, report_dir):
                    err.print(f"[dim]wrote {path}[/dim]")
        if status == EX_CONFIG:
            what, _, hint = reason.removeprefix("[DSH_INVALID_ARGUMENT] ").partition(" (hint: ")
            _fail("DSH_INVALID_ARGUMENT", what, hint.removesuffix(")"))
        if status == 5:
            _fail(
                "nothing-selected",
                "no test matched the selection",
                "check -k / --requirement / --capability / --spec-profile",
                5,
            )
        _fail(
            "adapter-unavailable",
            f"the implementation could not be started or handshaken: {reason}",
            "try `dsh-conformance smoke --adapter …` to diagnose the adapter",
            EX_SOFTWARE,
        )
    if received is None and status == 4:  # pytest's usage error: an option it rejected
        _fail("usage", "pytest rejected the selection (see the message above)", status=EX_USAGE)
    if received is None and status in (2, 3):
        if report_dir is not None:  # what ran, and that the run stopped: the footer says why
            settle_exit_status(record_path, EX_SOFTWARE if status == 3 else 2)
            for path in write_reports(record_path, report_dir):
                err.print(f"[dim]wrote {path}[/dim]")
        _fail(
            "run-aborted",
            f"pytest stopped with status {status} (see messages above)",
            status=EX_SOFTWARE if status == 3 else 2,
        )
    record = load_record(record_path)
    code = run_exit_status(record, fail_on)
    if received is not None and code in (0, EX_FAILURES):
        code = EX_INTERRUPTED  # a signal after the last test: still not a clean run
    settle_exit_status(record_path, code, fail_on)  # the footer says what the command exits with
    record = load_record(record_path)
    _print_record(record, fmt, out)
    if report_dir is not None:
        for path in write_reports(record_path, report_dir):
            err.print(f"[dim]wrote {path}[/dim]")
        err.print(f"[dim]wrote {record_path}[/dim]")
    for problem in run_problems(record):
        hint = problem.hint
        if problem.exit_status in (EX_INTERRUPTED, EX_INCOMPLETE) and report_dir is not None:
            hint = f"continue with: dsh-conformance run --resume {record_path}"
        _print_error(problem.code, problem.message, hint)
    if received is not None and not run_problems(record):
        _print_error("interrupted", f"the run was interrupted by {received}")
    if code:
        sys.exit(code)
