"""``coverage``: MUST requirements that no test cites, and seed MUSTs without a fixed
example (D-400, D-401)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from dsh_conformance.cli._common import _consoles, handles_errors
from dsh_conformance.errors import EX_FAILURES

if TYPE_CHECKING:  # the CLI imports pytest and the catalog only when a command runs
    from dsh_conformance.runner import CollectedTest
    from dsh_conformance.spec import Requirement


def without_fixed_example(
    musts: Sequence[Requirement], tests: Sequence[CollectedTest]
) -> list[Requirement]:
    """The seed MUSTs of *musts* that no fixed example cites (D-401): their verdict would
    rest on what Hypothesis happens to generate."""
    fixed = {r for t in tests if t.fixed for r in t.requirements}
    return [r for r in musts if r.verdict == "seed" and r.id not in fixed]


@click.command()
@click.option("--spec-profile", type=click.Choice(["seed", "release"]), default="seed")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@handles_errors
def coverage(spec_profile: str, fmt: str) -> None:
    """List MUST requirements no test cites and seed MUSTs without a fixed example (a
    plain test, a case, or a property with an @example: D-401); exit 1 if there are any."""
    from dsh_conformance.model import jsstr
    from dsh_conformance.runner import collect
    from dsh_conformance.spec import load_catalog

    catalog = load_catalog()
    tests = collect(spec_profile)
    cited = {r for t in tests for r in t.requirements}
    musts = catalog.musts(spec_profile)
    missing = [r for r in musts if r.id not in cited]
    unfixed = without_fixed_example(musts, tests)
    seed_musts = sum(r.verdict == "seed" for r in musts)
    if fmt == "json":
        click.echo(
            jsstr.stringify(
                {
                    "profile": spec_profile,
                    "musts": len(musts),
                    "covered": len(musts) - len(missing),
                    "tests": len(tests),
                    "untested": [{"id": r.id, "title": r.title} for r in missing],
                    "seed_musts": seed_musts,
                    "fixed": seed_musts - len(unfixed),
                    "fixed_tests": sum(t.fixed for t in tests),
                    "without_fixed_example": [{"id": r.id, "title": r.title} for r in unfixed],
                    "fixed_by": {
                        r.id: [t.nodeid for t in tests if t.fixed and r.id in t.requirements]
                        for r in musts
                        if r.verdict == "seed"
                    },
                }
            )
        )
    else:
        out, err = _consoles()
        from rich.markup import escape

        for req in missing:
            out.print(f"{req.id}\tuntested\t{escape(req.title)}")
        for req in unfixed:
            out.print(f"{req.id}\tno fixed example\t{escape(req.title)}")
        err.print(
            f"{len(musts) - len(missing)}/{len(musts)} MUST requirements of the "
            f"{spec_profile} profile have tests ({len(tests)} tests); "
            f"{seed_musts - len(unfixed)}/{seed_musts} seed MUSTs have a fixed example "
            f"({sum(t.fixed for t in tests)} fixed tests)"
        )
    if missing or unfixed:
        sys.exit(EX_FAILURES)
