"""``info``: an implementation's handshake (identity, protocol, capabilities, components)
without running anything, as a host author checks what the harness will see."""

from __future__ import annotations

import sys

import click

from dsh_conformance.cli._common import _consoles, _fail, handles_errors
from dsh_conformance.errors import EX_SOFTWARE


@click.command()
@click.option("--adapter", "-a", default="reference", show_default=True)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="seconds to wait for the handshake",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@handles_errors
def info(adapter: str, timeout: float, fmt: str) -> None:
    """Show an implementation's handshake: name, version, language, protocol,
    capabilities and component versions (exit 70 when it cannot start)."""
    from dsh_conformance.adapters.contract import AdapterFault, ImplementationError
    from dsh_conformance.adapters.registry import resolve
    from dsh_conformance.reporting.escape import for_terminal, json_text

    impl = resolve(adapter)
    if hasattr(impl, "timeout"):
        impl.timeout = timeout
    if hasattr(impl, "startup_timeout"):
        impl.startup_timeout = timeout
    try:
        handshake = impl.handshake()
    except (AdapterFault, ImplementationError) as exc:
        _fail(
            "adapter-unavailable",
            f"{adapter}: no handshake: {getattr(exc, 'message', str(exc))}",
            "try `dsh-conformance smoke --adapter …` to diagnose the adapter",
            EX_SOFTWARE,
        )
        return
    finally:
        impl.close()
    data = {
        "adapter": adapter,
        "transport": "subprocess" if hasattr(impl, "argv") else "in-process",
        **handshake.to_json(),
    }
    if fmt == "json":
        click.echo(json_text(data))
        return
    from rich.table import Table
    from rich.text import Text

    who = handshake.implementation
    out, _ = _consoles()
    table = Table(title=f"info: {for_terminal(adapter)}", show_header=False)
    table.add_column("field", style="bold", no_wrap=True)
    table.add_column("value")
    rows = [
        ("implementation", who.name),
        ("version", who.version or "(not given)"),
        ("language", who.language),
        ("homepage", who.homepage or "(not given)"),
        ("protocol", str(handshake.protocol)),
        ("transport", str(data["transport"])),
        ("capabilities", ", ".join(sorted(handshake.capabilities)) or "(none)"),
    ]
    rows += [(f"component {name}", version) for name, version in who.components]
    for field, value in rows:
        table.add_row(field, Text(for_terminal(value)))
    out.print(table)
    sys.stdout.flush()
