"""``adapters``: the adapter kinds this installation knows."""

from __future__ import annotations

import click

from dsh_conformance.cli._common import _consoles


@click.command("adapters")
def adapters_command() -> None:
    """List the adapter kinds this installation knows."""
    from rich.table import Table

    from dsh_conformance.adapters.expectations import builtin_manifest
    from dsh_conformance.adapters.registry import known

    out, _ = _consoles()
    table = Table(title="adapters")
    table.add_column("name")
    table.add_column("description")
    table.add_column("manifest")
    for name, description in known().items():
        manifest = builtin_manifest(name)
        table.add_row(name, description, manifest.name if manifest else "")
    out.print(table)
