"""``spec``: the requirement catalog, or one requirement with its tests."""

from __future__ import annotations

import click

from dsh_conformance.cli._common import _consoles, _fail, handles_errors


@click.command()
@click.argument("requirement_id", required=False)
@click.option("--spec-profile", type=click.Choice(["seed", "release"]), default="seed")
@handles_errors
def spec(requirement_id: str | None, spec_profile: str) -> None:
    """List requirements, or show one with its seed sentence, decisions and tests."""
    from rich.table import Table

    from dsh_conformance.runner import collect
    from dsh_conformance.spec import load_catalog

    out, _ = _consoles()
    catalog = load_catalog()
    req = catalog.requirements.get(requirement_id.upper()) if requirement_id else None
    if requirement_id is not None and req is None:  # before the slow collection
        _fail(
            "unknown-requirement",
            f"no requirement {requirement_id!r}",
            "run `dsh-conformance spec` to list them",
        )
    tests = collect(spec_profile)
    if requirement_id is None:
        table = Table(title=f"requirements ({spec_profile} profile)")
        for column in ("id", "level", "tests", "title"):
            table.add_column(column)
        for listed in catalog.requirements.values():
            if spec_profile in listed.profiles:
                count = sum(listed.id in t.requirements for t in tests)
                table.add_row(listed.id, listed.level, str(count), listed.title)
        out.print(table)
        return
    if req is None:
        return
    from rich.markup import escape

    out.print(
        f"[bold]{req.id}[/bold] ({req.level}, capability {req.capability}, "
        f"profiles {', '.join(req.profiles)}): {escape(req.title)}"
    )
    source = req.seed_file or "a numbered decision"
    out.print(f"\n[bold]seed[/bold] ({escape(source)}):\n  “{escape(req.quote)}”")
    if req.note:
        out.print(f"\n[bold]note[/bold]: {escape(req.note)}")
    for did in req.decisions:
        decision = catalog.decisions.get(did)
        if decision is not None:
            out.print(
                f"\n[bold]{did}[/bold] {escape(decision.title)}\n  {escape(decision.decision)}"
            )
    citing = [t.nodeid for t in tests if req.id in t.requirements]
    out.print(f"\n[bold]tests[/bold] ({len(citing)}):")
    for nodeid in citing:
        out.print(f"  {escape(nodeid)}")
