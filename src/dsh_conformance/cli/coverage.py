"""``coverage``: MUST requirements that no test cites."""

from __future__ import annotations

import sys

import click

from dsh_conformance.cli._common import _consoles, handles_errors
from dsh_conformance.errors import EX_FAILURES


@click.command()
@click.option("--spec-profile", type=click.Choice(["seed", "release"]), default="seed")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@handles_errors
def coverage(spec_profile: str, fmt: str) -> None:
    """List MUST requirements no test cites (traceability); exit 1 if there are any."""
    from dsh_conformance.model import jsstr
    from dsh_conformance.runner import collect
    from dsh_conformance.spec import load_catalog

    catalog = load_catalog()
    tests = collect(spec_profile)
    cited = {r for t in tests for r in t.requirements}
    musts = catalog.musts(spec_profile)
    missing = [r for r in musts if r.id not in cited]
    if fmt == "json":
        click.echo(
            jsstr.stringify(
                {
                    "profile": spec_profile,
                    "musts": len(musts),
                    "covered": len(musts) - len(missing),
                    "tests": len(tests),
                    "untested": [{"id": r.id, "title": r.title} for r in missing],
                }
            )
        )
    else:
        out, err = _consoles()
        from rich.markup import escape

        for req in missing:
            out.print(f"{req.id}\t{escape(req.title)}")
        err.print(
            f"{len(musts) - len(missing)}/{len(musts)} MUST requirements of the "
            f"{spec_profile} profile have tests ({len(tests)} tests)"
        )
    if missing:
        sys.exit(EX_FAILURES)
