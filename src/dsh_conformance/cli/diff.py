"""``diff``: what changed between two run records."""

from __future__ import annotations

import sys

import click

from dsh_conformance.cli._common import (
    _ALLOW_INCOMPLETE,
    _require_complete,
    fail_on_option,
    handles_errors,
)
from dsh_conformance.errors import EX_FAILURES


@click.command()
@click.argument("old")
@click.argument("new")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown")
@_ALLOW_INCOMPLETE
@fail_on_option
@handles_errors
def diff(old: str, new: str, fmt: str, allow_incomplete: bool, fail_on: str) -> None:
    """Compare two run records; exit 1 when a --fail-on verdict of NEW gained a failure,
    3 when either record is not of a complete run."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.diff import diff as compute
    from dsh_conformance.reporting.diff import render_markdown
    from dsh_conformance.reporting.escape import json_text

    before, after = load_record(old), load_record(new)
    result = compute(before, after)
    if fmt == "json":
        click.echo(json_text(result.to_json()))
    else:
        click.echo(render_markdown(result, before, after), nl=False)
    _require_complete([before, after], allow_incomplete)
    if result.regressed_on(fail_on):
        sys.exit(EX_FAILURES)
