"""``report``: render run records as html, markdown, junit or json."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from dsh_conformance.cli._common import _fail, handles_errors
from dsh_conformance.errors import EX_CANTCREAT


@click.command()
@click.argument("records", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "markdown", "junit", "json"]),
    default="html",
    show_default=True,
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None)
@click.option("--title", default="dsh-conformance")
@handles_errors
def report(records: Sequence[str], fmt: str, output: Path | None, title: str) -> None:
    """Render run records; html takes several (a requirements × adapters matrix)."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting import html, jsonreport, junit, markdown

    loaded = [load_record(r) for r in records]
    if fmt != "html" and len(loaded) > 1:
        _fail("one-record-only", f"--format {fmt} renders one record", status=2)
    if fmt == "html":
        text = html.render(loaded, title)
    else:
        text = {"markdown": markdown, "junit": junit, "json": jsonreport}[fmt].render(loaded[0])
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail("cannot-write", f"{output}: {exc.strerror or exc}", status=EX_CANTCREAT)
