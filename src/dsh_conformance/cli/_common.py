"""What every command shares: consoles, one-line diagnostics, error handling, options."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from dsh_conformance.errors import EX_INCOMPLETE, HarnessError

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "markdown", "json")


def _consoles() -> tuple[Any, Any]:
    import os

    from rich.console import Console

    if sys.stdout.isatty() or "COLUMNS" in os.environ:
        return Console(soft_wrap=False), Console(stderr=True)
    # Piped output (CI logs, files): nothing wraps or is cut, so a replay line pastes
    # whole and a title reads in full, whatever reads the log.
    return Console(soft_wrap=True, width=WIDE), Console(stderr=True, soft_wrap=True, width=WIDE)


#: The width of piped output: wider than any line a report prints.
WIDE = 4096


def _fail(code: str, message: str, hint: str = "", status: int = 78) -> None:
    raise HarnessError(code, message, hint=hint, exit_status=status)


def _print_error(code: str, message: str, hint: str = "") -> None:
    """One diagnostic on stderr: ``error[code] message``, then ``hint: …``."""
    from dsh_conformance.reporting.escape import for_terminal

    click.echo(f"error[{code}] {for_terminal(message)}", err=True)
    if hint:
        click.echo(f"  hint: {for_terminal(hint)}", err=True)


def handles_errors(command: F) -> F:
    """Render HarnessError / DshError as a diagnostic with code and hint, then exit."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dsh_conformance.model.errors import DshError

        try:
            return command(*args, **kwargs)
        except (HarnessError, DshError) as exc:
            status = exc.exit_status if isinstance(exc, HarnessError) else 78
            _print_error(str(exc.code), exc.message, exc.hint or "")
            sys.exit(status)

    return wrapper  # type: ignore[return-value]


FAIL_ON_HELP = (
    "which verdicts fail the command: seed (the notes' MUSTs, default), seed-should (also "
    "their SHOULD/MAY), profile (also the reference/release profile), all"
)


def fail_on_option(command: F) -> F:
    """``--fail-on``: the verdicts that make the exit status non-zero (D-161)."""
    from dsh_conformance.outcomes import GATES

    return click.option(
        "--fail-on",
        "fail_on",
        type=click.Choice(GATES),
        default="seed",
        show_default=True,
        help=FAIL_ON_HELP,
    )(command)


_ALLOW_INCOMPLETE = click.option(
    "--allow-incomplete",
    is_flag=True,
    help="judge a truncated, interrupted, stopped or aborted record by what ran (default: exit 3)",
)


def _require_complete(records: Sequence[Any], allow: bool) -> list[Any]:
    """Exit 3 (EX_INCOMPLETE) unless every record is of a complete run, or *allow*; then
    the records to judge (an allowed truncated record is judged by what ran)."""
    import attrs

    incomplete = [r for r in records if r.ending != "complete"]
    if incomplete and not allow:
        record = incomplete[0]
        _fail(
            "incomplete-record",
            f"{record.source}: {record.ending_text} ({len(record.tests)} of "
            f"{record.header.get('selected', '?')} tests recorded)",
            "rerun, continue it with `dsh-conformance run --resume RECORD`, or pass "
            "--allow-incomplete to judge what ran",
            EX_INCOMPLETE,
        )
    return [attrs.evolve(r, footer={}) if r.truncated else r for r in records]
