"""``dsh-conformance``: run the suite against an implementation and read the results.

stdout carries data (tables, reports, JSON); stderr carries people-facing progress and
diagnostics.  Errors render with a stable code and a hint; exit statuses are
sysexits-style (errors.py).  Nothing heavy is imported until a command runs.
"""

from __future__ import annotations

import functools
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from dsh_conformance.errors import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_SOFTWARE,
    EX_USAGE,
    EXIT_STATUSES,
    HarnessError,
)

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", "markdown", "json")


def _consoles() -> tuple[Any, Any]:
    import os

    from rich.console import Console

    # Piped output (CI logs, files) gets a table wide enough to read, not 80 columns.
    width = None if sys.stdout.isatty() or "COLUMNS" in os.environ else 120
    return Console(soft_wrap=False, width=width), Console(stderr=True)


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


# --- run ------------------------------------------------------------------------------------

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


class _Collected:
    """What ``_Progress.pytest_collection_finish`` reads of a session: its items."""

    def __init__(self, items: Sequence[str]) -> None:
        self.items = items


class _WorkerTotal:
    """Under xdist the controller collects nothing: the progress total comes from the
    first worker's collection (registered only with --workers, when the hook exists)."""

    def __init__(self, progress: _Progress) -> None:
        self.progress = progress

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if not self.progress.total:
            self.progress.pytest_collection_finish(_Collected(ids))


class _Progress:
    """A rich progress bar on stderr, fed by pytest hooks."""

    def __init__(self, console: Any) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("[bold]running"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task("run", total=None, status="collecting")
        self.failed = 0
        self.done = 0
        self.total = 0
        #: Without a terminal (CI logs), a plain line at every tenth of the run instead.
        self.plain = not console.is_terminal
        self.console = console

    def pytest_collection_finish(self, session: Any) -> None:
        self.total = len(session.items)
        self.progress.update(self.task, total=self.total, status="")
        if not self.plain:
            self.progress.start()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.failed += 1
            self.progress.update(self.task, status=f"[red]{self.failed} failing")

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.progress.advance(self.task)
        self.done += 1
        step = max(1, self.total // 10)
        if self.plain and (self.done % step == 0 or self.done == self.total):
            self.console.print(
                f"running: {self.done}/{self.total} tests, {self.failed} failing",
                markup=False,
                highlight=False,
            )

    def pytest_sessionfinish(self, session: Any) -> None:
        self.progress.stop()


def _check_manifest(path: str | None) -> None:
    if path:
        from dsh_conformance.adapters.expectations import load_manifest
        from dsh_conformance.spec import load_catalog

        load_manifest(path, known_requirements=load_catalog().requirements)


def _write_reports(record_path: Path, report_dir: Path) -> list[Path]:
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting import html, jsonreport, junit, markdown

    record = load_record(record_path)
    outputs = {
        "report.md": markdown.render(record),
        "junit.xml": junit.render(record),
        "report.html": html.render([record]),
        "report.json": jsonreport.render(record),
    }
    from dsh_conformance import badge

    outputs["badge.json"] = badge.render(outputs["report.json"])
    outputs["badge.md"] = badge.markdown(outputs["report.json"])
    written = []
    for name, text in outputs.items():
        path = report_dir / name
        try:
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail("cannot-write", f"{path}: {exc.strerror or exc}", status=EX_CANTCREAT)
        written.append(path)
    return written


@main.command()
@click.option(
    "--adapter",
    "-a",
    default="reference",
    show_default=True,
    help="implementation: reference, subprocess:CMD, upstream, python:MODULE:FACTORY",
)
@click.option("--requirement", "-r", multiple=True, help="only tests citing ID (glob: URI-*)")
@click.option("-k", "keyword", default="", help="pytest -k expression on test names")
@click.option("--capability", "-c", multiple=True, help="only tests needing this capability")
@click.option(
    "--require",
    "require",
    multiple=True,
    metavar="CAP",
    help="fail the run unless the implementation declares capability CAP (repeatable)",
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="pass a run in which no applicable test ran (default: it fails with exit 5)",
)
@click.option(
    "--hypothesis-profile",
    type=click.Choice(["quick", "dev", "ci", "thorough"]),
    default=None,
    help="Hypothesis profile (default: ci under CI=true, else dev)",
)
@click.option("--seed", type=int, default=None, help="Hypothesis seed (default: a fresh one)")
@click.option(
    "--spec-profile", type=click.Choice(["seed", "release"]), default="seed", show_default=True
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="write record.jsonl, report.md, junit.xml, report.html, report.json here",
)
@click.option(
    "--expectations",
    type=click.Path(dir_okay=False),
    default=None,
    help="expectation manifest (default: the built-in one for the adapter, if any)",
)
@click.option("--no-expectations", is_flag=True, help="ignore the built-in manifest")
@click.option(
    "--write-expectations",
    type=click.Path(dir_okay=False),
    default=None,
    help="write a manifest for this run's failures",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="per-call timeout in seconds (subprocess)",
)
@click.option("--validate", is_flag=True, help="check every protocol message (subprocess)")
@click.option("-x", "--exitfirst", is_flag=True, help="stop at the first failure")
@click.option(
    "--workers",
    "-n",
    type=click.IntRange(min=1),
    default=None,
    help="run in N pytest-xdist worker processes, each with its own adapter instance",
)
@click.option(
    "--resume",
    type=click.Path(path_type=Path),
    default=None,
    help="continue the interrupted run of this record (same seed, profiles, filters)",
)
@click.option(
    "--last-failed",
    type=click.Path(path_type=Path),
    default=None,
    help="rerun only the tests that failed in this record (same seed, profiles, filters)",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@fail_on_option
@click.pass_context
@handles_errors
def run(
    ctx: click.Context,
    adapter: str,
    requirement: Sequence[str],
    keyword: str,
    capability: Sequence[str],
    require: Sequence[str],
    allow_empty: bool,
    hypothesis_profile: str | None,
    seed: int | None,
    spec_profile: str,
    report_dir: Path | None,
    expectations: str | None,
    no_expectations: bool,
    write_expectations: str | None,
    timeout: float | None,
    validate: bool,
    exitfirst: bool,
    workers: int | None,
    resume: Path | None,
    last_failed: Path | None,
    fmt: str,
    fail_on: str,
) -> None:
    """Run the conformance suite and print both verdicts and a per-requirement table.

    The seed verdict holds the implementation to what the notes say; the profile verdict
    to this project's decisions and the reference model's bytes.  Exits 0 when the
    verdicts selected by --fail-on pass, 1 when one fails (or an expectation is stale or
    unexpectedly passes, or a --require capability is not declared), 3 when the run was
    aborted (a worker died), 5 when no applicable test ran, 70 when the adapter cannot
    start, 78 for a bad adapter name, requirement id or capability, 130 when interrupted
    (the reports of what ran are still written, and say so at the top; --resume goes on).
    """
    from dsh_conformance import runner, runplan
    from dsh_conformance.adapters.expectations import builtin_manifest
    from dsh_conformance.protocol_versions import RunNotice

    out, err = _consoles()
    if resume is not None and last_failed is not None:
        _fail("usage", "--resume and --last-failed exclude each other", status=EX_USAGE)
    earlier = resume or last_failed
    if earlier is not None:
        plan = runplan.from_record(earlier, rerun_failed=last_failed is not None)
        given = {
            name
            for name in ctx.params
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        }
        adapter, seed, hypothesis_profile, spec_profile = plan.override(
            given, adapter, seed, hypothesis_profile, spec_profile
        )
        requirement = requirement or plan.requirements
        capability = capability or plan.capabilities
        keyword = keyword or plan.keyword
        require = require or plan.require
        allow_empty = allow_empty or plan.allow_empty
        if expectations is None and plan.expectations and not no_expectations:
            expectations = plan.expectations
        earlier = runplan.private_copy(earlier)
    runplan.check_selection(adapter, requirement, capability, require)
    if report_dir is not None:
        runplan.check_writable_dir(report_dir, "--report-dir")
    if write_expectations is not None:
        runplan.check_writable_file(Path(write_expectations), "--write-expectations")
    if expectations is None and not no_expectations:
        builtin = builtin_manifest(adapter)
        expectations = str(builtin) if builtin else None
    _check_manifest(expectations)
    options = runner.RunOptions(
        adapter=adapter,
        requirements=requirement,
        capabilities=capability,
        keyword=keyword,
        hypothesis_profile=hypothesis_profile,
        seed=seed if seed is not None else runner.new_seed(),
        spec_profile=spec_profile,
        expectations=expectations,
        write_expectations=write_expectations,
        timeout=timeout,
        validate=validate,
        exitfirst=exitfirst,
        require=require,
        allow_empty=allow_empty,
        extra=runplan.extra_args(earlier, last_failed is not None, workers),
    )
    with tempfile.TemporaryDirectory(prefix="dsh-record-") as tmp:
        if report_dir is not None:
            report_dir.mkdir(parents=True, exist_ok=True)
        record_path = (report_dir or Path(tmp)) / "record.jsonl"
        err.print(f"[dim]dsh-conformance: {adapter} (seed {options.seed})[/dim]", markup=True)
        log = report_dir / "pytest.log" if report_dir is not None else None
        progress = _Progress(err)
        plugins: list[Any] = [progress] + ([_WorkerTotal(progress)] if workers else [])
        plugins.append(RunNotice())  # an older protocol's missed tests, at the top (D-292)
        status = runner.run(options, record_path, plugins=plugins, log=log)
        _finish_run(status, record_path, report_dir, fmt, out, err, fail_on)


def _finish_run(
    status: int,
    record_path: Path,
    report_dir: Path | None,
    fmt: str,
    out: Any,
    err: Any,
    fail_on: str = "seed",
) -> None:
    from dsh_conformance import signals
    from dsh_conformance.record import load_record, settle_exit_status
    from dsh_conformance.reporting.summary import run_exit_status, run_problems

    received = signals.received()
    if received is not None and not record_path.exists():
        _fail(
            "interrupted",
            f"the run was interrupted by {received} before any test ran",
            status=EX_INTERRUPTED,
        )
    if received is None and (status in (EX_SOFTWARE, EX_CONFIG) or not record_path.exists()):
        reason = ""
        if record_path.exists():
            footer = load_record(record_path).footer or {}
            reason = str(footer.get("reason", ""))
            settle_exit_status(record_path, EX_CONFIG if status == EX_CONFIG else EX_SOFTWARE)
        if status == EX_CONFIG:
            what, _, hint = reason.removeprefix("[DSH_INVALID_ARGUMENT] ").partition(" (hint: ")
            _fail("DSH_INVALID_ARGUMENT", what, hint.removesuffix(")"))
        if status == 5:
            _fail(
                "nothing-selected",
                "no test matched the selection",
                "check -k / --requirement / --capability / --spec-profile",
                5,
            )
        _fail(
            "adapter-unavailable",
            f"the implementation could not be started or handshaken: {reason}",
            "try `dsh-conformance smoke --adapter …` to diagnose the adapter",
            EX_SOFTWARE,
        )
    if received is None and status in (2, 3, 4):
        _fail(
            "run-aborted",
            f"pytest stopped with status {status} (see messages above)",
            status=EX_SOFTWARE if status == 3 else 2,
        )
    record = load_record(record_path)
    code = run_exit_status(record, fail_on)
    if received is not None and code in (0, EX_FAILURES):
        code = EX_INTERRUPTED  # a signal after the last test: still not a clean run
    settle_exit_status(record_path, code, fail_on)  # the footer says what the command exits with
    record = load_record(record_path)
    _print_record(record, fmt, out)
    if report_dir is not None:
        for path in _write_reports(record_path, report_dir):
            err.print(f"[dim]wrote {path}[/dim]")
        err.print(f"[dim]wrote {record_path}[/dim]")
    for problem in run_problems(record):
        hint = problem.hint
        if problem.exit_status in (EX_INTERRUPTED, EX_INCOMPLETE) and report_dir is not None:
            hint = f"continue with: dsh-conformance run --resume {record_path}"
        _print_error(problem.code, problem.message, hint)
    if received is not None and not run_problems(record):
        _print_error("interrupted", f"the run was interrupted by {received}")
    if code:
        sys.exit(code)


def _print_record(record: Any, fmt: str, out: Any) -> None:
    if fmt == "json":
        from dsh_conformance.reporting import jsonreport

        click.echo(jsonreport.render(record), nl=False)
    elif fmt == "markdown":
        from dsh_conformance.reporting import markdown

        click.echo(markdown.render(record), nl=False)
    else:
        from dsh_conformance.reporting.terminal import print_summary

        print_summary(record, out)


# --- reading records ------------------------------------------------------------------------


_ALLOW_INCOMPLETE = click.option(
    "--allow-incomplete",
    is_flag=True,
    help="judge a truncated, interrupted, stopped or aborted record by what ran (default: exit 3)",
)


@main.command()
@click.argument("record", default="-")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@_ALLOW_INCOMPLETE
@fail_on_option
@handles_errors
def summary(record: str, fmt: str, allow_incomplete: bool, fail_on: str) -> None:
    """Summarise a run record (a file, or - for stdin); exit 1 if a --fail-on verdict
    failed, 3 if the run did not complete."""
    from dsh_conformance.record import load_record
    from dsh_conformance.reporting.summary import run_failed, run_problems

    out, _ = _consoles()
    loaded = load_record(record)
    _print_record(loaded, fmt, out)
    judged = _require_complete([loaded], allow_incomplete)
    problems = run_problems(judged[0], incomplete_ok=allow_incomplete)
    for problem in problems:
        _print_error(problem.code, problem.message, problem.hint)
    if problems:
        sys.exit(problems[0].exit_status)
    if run_failed(judged[0], fail_on, incomplete_ok=allow_incomplete):
        sys.exit(EX_FAILURES)


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


@main.command()
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


@main.command()
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


# --- adapters -------------------------------------------------------------------------------


@main.command()
@click.option("--adapter", "-a", default="reference", show_default=True)
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=10.0, show_default=True
)
@handles_errors
def smoke(adapter: str, timeout: float) -> None:
    """Is the adapter sound?  Handshake, schema-valid replies, typed errors, reset.

    This separates "the adapter is broken" (exit 70) from "the implementation does not
    conform" (what `run` reports).
    """
    from rich.table import Table
    from rich.text import Text

    from dsh_conformance.reporting.escape import for_terminal
    from dsh_conformance.smoke import smoke_checks

    out, _ = _consoles()
    checks = smoke_checks(adapter, timeout=timeout)
    table = Table(title=f"smoke: {for_terminal(adapter)}")
    for column in ("check", "result", "detail"):
        table.add_column(column)
    for check in checks:
        style = {"ok": "green", "fail": "bold red", "skip": "dim", "note": "yellow"}[check.status]
        table.add_row(check.name, Text(check.status, style), Text(for_terminal(check.detail)))
    out.print(table)
    if any(c.status == "fail" for c in checks):
        sys.exit(EX_SOFTWARE)


@main.command("adapters")
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


# --- the specification ----------------------------------------------------------------------


@main.command()
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


@main.command()
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


if __name__ == "__main__":
    main()
