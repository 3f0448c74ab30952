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

from dsh_conformance.cli._common import _consoles, _fail, _print_error
from dsh_conformance.errors import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_SOFTWARE,
    EX_USAGE,
    HarnessError,
)

if TYPE_CHECKING:
    from dsh_conformance.options import RunOptions


def print_record(record: Any, fmt: str, out: Any, all_rows: bool = False) -> None:
    """The record on stdout: the table, or the Markdown or JSON report (``--format``)."""
    if fmt == "json":
        from dsh_conformance.reporting import jsonreport

        click.echo(jsonreport.render(record), nl=False)
    elif fmt == "markdown":
        from dsh_conformance.reporting import markdown

        click.echo(markdown.render(record), nl=False)
    else:
        from dsh_conformance.reporting.terminal import print_summary

        print_summary(record, out, all_rows=all_rows)


def render_reports(record_path: Path) -> dict[str, str]:
    """Every report of the record at *record_path*, by file name."""
    from dsh_conformance import badge
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting import html, jsonreport, junit, markdown

    record = load_record(record_path)
    outputs = {
        "report.md": markdown.render(record),
        "junit.xml": junit.render(record),
        "report.html": html.render([record]),
        "report.json": jsonreport.render(record),
    }
    outputs["badge.json"] = badge.render(outputs["report.json"])
    outputs["badge.md"] = badge.markdown(outputs["report.json"])
    return outputs


def write_reports(record_path: Path, report_dir: Path, err: Any, fail_on: str | None) -> None:
    """Every report of the record, whole or none (``outputs.publish``); when they cannot
    be written the footer says the command's exit status, 73, before it exits."""
    from dsh_conformance.cli import outputs
    from dsh_conformance.record import settle_exit_status

    try:
        written = outputs.publish(render_reports(record_path), report_dir)
    except HarnessError as exc:
        settle_exit_status(record_path, EX_CANTCREAT, fail_on)
        raise HarnessError(
            exc.code,
            exc.message,
            hint=f"no report of this run was written; its record is {record_path} "
            "(`dsh-conformance summary` reads it): free the path or choose another "
            "--report-dir",
            exit_status=EX_CANTCREAT,
        ) from exc
    for path in written:
        err.print(f"[dim]wrote {path}[/dim]")


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
    resume: str = "",
    all_rows: bool = False,
) -> None:
    """Judge the run, settle its footer, write its reports, print it and exit; *resume*
    is the command that continues it when it did not finish."""
    from dsh_conformance import signals
    from dsh_conformance.record import load_record, settle_exit_status
    from dsh_conformance.reporting.exitstatus import run_exit_status
    from dsh_conformance.reporting.problems import run_problems

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
                write_reports(record_path, report_dir, err, None)
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
            write_reports(record_path, report_dir, err, None)
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
    if report_dir is not None:  # before anything says how the run went: 73 if they fail
        try:
            write_reports(record_path, report_dir, err, fail_on)
        except HarnessError:
            print_record(load_record(record_path), fmt, out, all_rows)
            raise
        err.print(f"[dim]wrote {record_path}[/dim]")
    print_record(record, fmt, out, all_rows)
    if report_dir is not None:
        err.print(f"reports: {report_dir / 'report.html'} and {report_dir / 'report.md'}")
    for problem in run_problems(record):
        hint = problem.hint
        if problem.exit_status in (EX_INTERRUPTED, EX_INCOMPLETE) and resume:
            hint = f"continue with: {resume}"
        _print_error(problem.code, problem.message, hint)
    if received is not None and not run_problems(record):
        _print_error(
            "interrupted",
            f"the run was interrupted by {received}",
            f"continue with: {resume}" if resume else "",
        )
    if code:
        sys.exit(code)
