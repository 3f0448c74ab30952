"""``dsh-conformance``: run the suite against an implementation and read the results.

stdout carries data (tables, reports, JSON); stderr carries people-facing progress and
diagnostics.  Errors render with a stable code and a hint; exit statuses are
sysexits-style (errors.py).  Nothing heavy is imported until a command runs.  One module
per command; this one holds the group.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Sequence
from typing import Any

import click

from dsh_conformance.cli._common import _print_error
from dsh_conformance.errors import EX_INTERRUPTED, EX_USAGE, EXIT_STATUSES


class _Cli(click.Group):
    """Usage errors and Ctrl-C end in one diagnostic line and a documented status, like
    every other error (never click's multi-line usage block or a traceback)."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        run = functools.partial(
            super().main, args, prog_name, complete_var, standalone_mode=False, **extra
        )
        if not standalone_mode:
            return run()
        try:
            result: Any = run()
        except click.UsageError as exc:
            command = exc.ctx.command_path if exc.ctx is not None else "dsh-conformance"
            _print_error("usage", exc.format_message(), f"{command} --help")
            sys.exit(EX_USAGE)
        except click.ClickException as exc:
            _print_error("usage", exc.format_message())
            sys.exit(exc.exit_code)
        except click.Abort:
            _print_error("interrupted", "interrupted by a signal")
            sys.exit(EX_INTERRUPTED)
        sys.exit(result if isinstance(result, int) else 0)


def _exit_table() -> str:
    rows = "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_STATUSES)
    return "\b\nExit statuses:\n" + rows


@click.group(
    cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]}, epilog=_exit_table()
)
@click.version_option(package_name="dsh-conformance")
def main() -> None:
    """Conformance suite for cross-session references and side sessions.

    \b
    dsh-conformance run                         # the reference model, per-requirement table
    dsh-conformance run --adapter 'subprocess:node adapter.mjs' --report-dir out/
    dsh-conformance smoke --adapter 'subprocess:node adapter.mjs'
    dsh-conformance diff baseline.jsonl out/record.jsonl
    """


def _register() -> None:
    from dsh_conformance.cli import (
        adapters,
        coverage,
        diff,
        info,
        report,
        run,
        smoke,
        spec,
        summary,
    )

    for command in (
        run.run,
        summary.summary,
        report.report,
        diff.diff,
        smoke.smoke,
        info.info,
        adapters.adapters_command,
        spec.spec,
        coverage.coverage,
    ):
        main.add_command(command)


_register()

__all__ = ["main"]
