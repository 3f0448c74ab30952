"""``summary``: a run record's verdicts and table."""

from __future__ import annotations

import sys

import click

from dsh_conformance.cli._common import (
    _ALLOW_INCOMPLETE,
    FORMATS,
    _consoles,
    _print_error,
    _require_complete,
    fail_on_option,
    handles_errors,
)
from dsh_conformance.cli.finish import print_record
from dsh_conformance.errors import EX_FAILURES


@click.command()
@click.argument("record", default="-")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@_ALLOW_INCOMPLETE
@fail_on_option
@handles_errors
def summary(record: str, fmt: str, allow_incomplete: bool, fail_on: str) -> None:
    """Summarise a run record (a file, or - for stdin); exit 1 if a --fail-on verdict
    failed, 3 if the run did not complete."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.exitstatus import run_failed
    from dsh_conformance.reporting.problems import run_problems

    out, _ = _consoles()
    loaded = load_record(record)
    print_record(loaded, fmt, out)
    judged = _require_complete([loaded], allow_incomplete)
    problems = run_problems(judged[0], incomplete_ok=allow_incomplete)
    for problem in problems:
        _print_error(problem.code, problem.message, problem.hint)
    if problems:
        sys.exit(problems[0].exit_status)
    if run_failed(judged[0], fail_on, incomplete_ok=allow_incomplete):
        sys.exit(EX_FAILURES)
