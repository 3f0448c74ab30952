"""``smoke``: is the adapter sound, apart from conformance."""

from __future__ import annotations

import sys

import click

from dsh_conformance.cli._common import _consoles, handles_errors
from dsh_conformance.errors import EX_SOFTWARE

# --- adapters -------------------------------------------------------------------------------


@click.command()
@click.option("--adapter", "-a", default="reference", show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=10.0,
    show_default=True,
    help="seconds to wait for each reply, the handshake included",
)
@click.option(
    "--handshake-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="seconds to wait for the handshake, when starting takes longer (default: --timeout)",
)
@handles_errors
def smoke(adapter: str, timeout: float, handshake_timeout: float | None) -> None:
    """Is the adapter sound?  Handshake, schema-valid replies, typed errors, reset.

    This separates "the adapter is broken" (exit 70) from "the implementation does not
    conform" (what `run` reports).
    """
    from rich.table import Table
    from rich.text import Text

    from dsh_conformance.reporting.escape import for_terminal
    from dsh_conformance.smoke import smoke_checks

    out, _ = _consoles()
    checks = smoke_checks(adapter, timeout=timeout, handshake_timeout=handshake_timeout)
    table = Table(title=f"smoke: {for_terminal(adapter)}")
    for column in ("check", "result", "detail"):
        table.add_column(column)
    for check in checks:
        style = {"ok": "green", "fail": "bold red", "skip": "dim", "note": "yellow"}[check.status]
        table.add_row(check.name, Text(check.status, style), Text(for_terminal(check.detail)))
    out.print(table)
    if any(c.status == "fail" for c in checks):
        sys.exit(EX_SOFTWARE)
