"""``run``: the suite against an implementation, then its reports.

The command line becomes one ``RunRequest`` (the run's ``RunOptions`` plus what only
the CLI does with it: where reports go, the format, the gate), built once and passed
down; ``--resume``/``--last-failed`` complete it from the earlier record's header.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click
from attrs import frozen

from dsh_conformance.cli._common import FORMATS, _consoles, _fail, fail_on_option, handles_errors
from dsh_conformance.errors import EX_USAGE, HarnessError
from dsh_conformance.profiles import PROFILES

if TYPE_CHECKING:
    from dsh_conformance.options import RunOptions


@frozen
class RunRequest:
    """One ``run`` command line: the run's options and what the CLI does around it."""

    options: RunOptions
    report_dir: Path | None = None
    no_expectations: bool = False
    verbose: bool = False
    #: ``--all`` (or ``-v``): every requirement and expected result, not only what is not passing.
    all_rows: bool = False
    collect_only: bool = False
    fmt: str = "table"
    fail_on: str = "seed"
    #: The options given on the command line (they win over a resumed record's header).
    given: frozenset[str] = frozenset()


def _one_value(command: Callable[[RunRequest], None]) -> Callable[..., None]:
    """Hand the command its parameters as one ``RunRequest`` (click passes each one)."""

    @functools.wraps(command)
    def wrapper(**params: Any) -> None:
        from dsh_conformance.options import RunOptions

        ctx = click.get_current_context()
        given = frozenset(
            name
            for name in ctx.params
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT
        )
        fields = attrs.fields_dict(RunOptions)
        for name in ("resume", "last_failed"):
            params[name] = str(params[name]) if params[name] is not None else None
        options = RunOptions(**{k: params.pop(k) for k in list(params) if k in fields})
        command(RunRequest(options, given=given, **params))

    return wrapper


@click.command()
@click.option(
    "--adapter",
    "-a",
    default="reference",
    show_default=True,
    help="implementation: reference, subprocess:CMD, upstream, python:MODULE:FACTORY",
)
@click.option(
    "--requirement", "-r", "requirements", multiple=True, help="only tests citing ID (glob: URI-*)"
)
@click.option("-k", "keyword", default="", help="pytest -k expression on test names")
@click.option(
    "--test",
    "tests",
    multiple=True,
    metavar="ID",
    help="only this test, by its full id (conformance/FILE::NAME[PARAM], as a replay names it)",
)
@click.option(
    "--capability", "-c", "capabilities", multiple=True, help="only tests needing this capability"
)
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
    type=click.Choice(list(PROFILES)),
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
    help="write record.jsonl, report.md, junit.xml, report.html, report.json here "
    "(default: dsh-report, or $DSH_REPORT_DIR; a --resume run: beside its record)",
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
    help="seconds to wait for each reply, the handshake included (default 30)",
)
@click.option(
    "--handshake-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="seconds to wait for the handshake, when starting takes longer (default: --timeout)",
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
@click.option(
    "--max-examples",
    type=click.IntRange(min=1),
    default=None,
    help="Hypothesis examples per property test (default: the --hypothesis-profile's); "
    "one with its own count, K under ci, runs ceil(K x N / 200), as under a profile of N "
    "(D-493)",
)
@click.option(
    "-v", "--verbose", is_flag=True, help="a line per test on stderr as it finishes (implies --all)"
)
@click.option(
    "--all",
    "all_rows",
    is_flag=True,
    help="list every requirement and every expected result (default: what is not passing)",
)
@click.option(
    "--collect-only",
    is_flag=True,
    help="list the tests the selection would run (with their requirements); run nothing",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@fail_on_option
@handles_errors
@_one_value
def run(request: RunRequest) -> None:
    """Run the conformance suite and print both verdicts and a per-requirement table.

    The seed verdict holds the implementation to what the notes say; the profile verdict
    to this project's decisions and the reference model's bytes.  Exits 0 when the
    verdicts selected by --fail-on pass, 1 when one fails (or an expectation is stale or
    unexpectedly passes, or a --require capability is not declared), 3 when the run was
    aborted (a worker died), 5 when no applicable test ran, 70 when the adapter cannot
    start, 78 for a bad adapter name, requirement id or capability, 130 when interrupted
    (the reports of what ran are still written, and say so at the top; --resume goes on).
    """
    from dsh_conformance.cli import finish

    options = _prepared(request)
    if request.collect_only:
        finish.list_selection(options, request.fmt)
        return
    out, err = _consoles()
    report_dir, record_name = _where(request, err)
    with tempfile.TemporaryDirectory(prefix="dsh-record-") as tmp:
        if report_dir is not None:
            report_dir.mkdir(parents=True, exist_ok=True)
        record_path = (report_dir or Path(tmp)) / record_name
        err.print(
            f"[dim]dsh-conformance: {options.adapter} (seed {options.seed})[/dim]", markup=True
        )
        log = report_dir / "pytest.log" if report_dir is not None else None
        status = _run(options, record_path, log, err, request.verbose)
        resume = resume_command(request, record_path) if report_dir is not None else ""
        finish.finish_run(
            status,
            record_path,
            report_dir,
            request.fmt,
            out,
            err,
            request.fail_on,
            resume,
            all_rows=request.all_rows or request.verbose,
        )


def _where(request: RunRequest, err: Any) -> tuple[Path | None, str]:
    """Where the reports go, and the record's file name there: ``--report-dir``; for
    ``--resume`` the resumed record's own folder and name (the run finishes it, D-481);
    else the default folder, when it can be written (a read-only folder still runs, D-483)."""
    from dsh_conformance import runplan
    from dsh_conformance.cli import outputs

    if request.report_dir is not None:
        return request.report_dir, "record.jsonl"
    if request.options.resume is not None:
        resumed = Path(request.options.resume)
        runplan.check_writable_dir(resumed.parent, "--resume")
        return resumed.parent, resumed.name
    default = outputs.default_dir()
    try:
        runplan.check_writable_dir(default, "the report folder")
    except HarnessError as exc:
        err.print(f"dsh-conformance: no reports: {exc.message} (choose one with --report-dir)")
        return None, "record.jsonl"
    return default, "record.jsonl"


def resume_command(request: RunRequest, record: Path) -> str:
    """The command that finishes this run from *record*: ``--resume`` brings the
    adapter, seed, profiles, filters, gate and manifest from the header; the rest of
    what was given comes along."""
    import shlex

    options = request.options
    argv = ["dsh-conformance", "run", "--resume", str(record)]
    for flag, value in (
        ("--timeout", options.timeout),
        ("--handshake-timeout", options.handshake_timeout),
        ("--workers", options.workers),
        ("--write-expectations", options.write_expectations),
    ):
        if value is not None:
            argv += [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    for flag, on in (
        ("--validate", options.validate),
        ("--exitfirst", options.exitfirst),
        ("--no-expectations", request.no_expectations),
        ("--verbose", request.verbose),
    ):
        argv += [flag] if on else []
    if request.report_dir is not None and request.report_dir != record.parent:
        argv += ["--report-dir", str(request.report_dir)]
    if request.fail_on != "seed":
        argv += ["--fail-on", request.fail_on]
    if request.fmt != "table":
        argv += ["--format", request.fmt]
    return shlex.join(argv)


def _prepared(request: RunRequest) -> RunOptions:
    """The run's options, checked before any collection and completed: from the earlier
    record (``--resume``/``--last-failed``), the built-in manifest, a fresh seed."""
    from dsh_conformance import runner, runplan
    from dsh_conformance.adapters.expectations import builtin_manifest

    options = request.options
    if options.resume is not None and options.last_failed is not None:
        _fail("usage", "--resume and --last-failed exclude each other", status=EX_USAGE)
    earlier = options.resume or options.last_failed
    if earlier is not None:
        rerun = options.last_failed is not None
        plan = runplan.from_record(Path(earlier), rerun_failed=rerun)
        options = plan.apply(options, request.given, manifest=not request.no_expectations)
        copy = str(runplan.private_copy(Path(earlier)))  # the new record may overwrite it
        if rerun:
            options = attrs.evolve(options, last_failed=copy)
        else:
            options = attrs.evolve(options, resume=copy)
    runplan.check_selection(
        options.adapter, options.requirements, options.capabilities, options.require
    )
    runplan.check_keyword(options.keyword)
    if request.report_dir is not None:
        runplan.check_writable_dir(request.report_dir, "--report-dir")
    if options.write_expectations is not None:
        runplan.check_writable_file(Path(options.write_expectations), "--write-expectations")
    if options.expectations is None and not request.no_expectations:
        builtin = builtin_manifest(options.adapter)
        options = attrs.evolve(options, expectations=str(builtin) if builtin else None)
    _check_manifest(options.expectations)
    runplan.check_workers(options.workers)
    if options.seed is None:
        options = attrs.evolve(options, seed=runner.new_seed())
    return options


def _check_manifest(path: str | None) -> None:
    if path:
        from dsh_conformance.adapters.expectations import load_manifest
        from dsh_conformance.spec import load_catalog

        load_manifest(path, known_requirements=load_catalog().requirements)


def _run(options: RunOptions, record: Path, log: Path | None, err: Any, verbose: bool) -> int:
    """The suite under pytest with the CLI's own plugins: progress on stderr, and an
    older protocol's missed tests at the top (D-292)."""
    from dsh_conformance import runner
    from dsh_conformance.cli.progress import Progress, WorkerTotal
    from dsh_conformance.early_start import EarlyStart
    from dsh_conformance.protocol_versions import RunNotice

    progress = Progress(err, verbose=verbose)
    plugins: list[Any] = [progress] + ([WorkerTotal(progress)] if options.workers else [])
    plugins.append(RunNotice())
    early = None if options.workers else EarlyStart.launch(options.adapter)  # D-537
    if early is not None:
        plugins.append(early)
    try:
        return runner.run(options, record, plugins=plugins, log=log)
    finally:
        if early is not None:
            early.close_unused()
