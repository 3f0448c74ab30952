"""``run``: the suite against an implementation, then its reports."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from dsh_conformance.cli._common import (
    FORMATS,
    _consoles,
    _fail,
    _print_error,
    _print_record,
    fail_on_option,
    handles_errors,
)
from dsh_conformance.cli.progress import Progress, WorkerTotal
from dsh_conformance.errors import (
    EX_CANTCREAT,
    EX_CONFIG,
    EX_FAILURES,
    EX_INCOMPLETE,
    EX_INTERRUPTED,
    EX_SOFTWARE,
    EX_USAGE,
)


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


@click.command()
@click.option(
    "--adapter",
    "-a",
    default="reference",
    show_default=True,
    help="implementation: reference, subprocess:CMD, upstream, python:MODULE:FACTORY",
)
@click.option("--requirement", "-r", multiple=True, help="only tests citing ID (glob: URI-*)")
@click.option("-k", "keyword", default="", help="pytest -k expression on test names")
@click.option(
    "--test",
    "tests",
    multiple=True,
    metavar="ID",
    help="only this test, by its full id (conformance/FILE::NAME[PARAM], as a replay names it)",
)
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
    help="Hypothesis examples per property test (default: the --hypothesis-profile's)",
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
@click.pass_context
@handles_errors
def run(
    ctx: click.Context,
    adapter: str,
    requirement: Sequence[str],
    keyword: str,
    tests: Sequence[str],
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
    handshake_timeout: float | None,
    validate: bool,
    exitfirst: bool,
    workers: int | None,
    resume: Path | None,
    last_failed: Path | None,
    max_examples: int | None,
    verbose: bool,
    all_rows: bool,
    collect_only: bool,
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
        tests = tests or plan.tests
        require = require or plan.require
        allow_empty = allow_empty or plan.allow_empty
        if expectations is None and plan.expectations and not no_expectations:
            expectations = plan.expectations
        earlier = runplan.private_copy(earlier)
    runplan.check_selection(adapter, requirement, capability, require)
    runplan.check_keyword(keyword)
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
        tests=tests,
        hypothesis_profile=hypothesis_profile,
        seed=seed if seed is not None else runner.new_seed(),
        spec_profile=spec_profile,
        expectations=expectations,
        write_expectations=write_expectations,
        timeout=timeout,
        handshake_timeout=handshake_timeout,
        max_examples=max_examples,
        validate=validate,
        exitfirst=exitfirst,
        require=require,
        allow_empty=allow_empty,
        extra=runplan.extra_args(earlier, last_failed is not None, workers),
    )
    if collect_only:
        _list_selection(options, fmt, out, err)
        return
    with tempfile.TemporaryDirectory(prefix="dsh-record-") as tmp:
        if report_dir is not None:
            report_dir.mkdir(parents=True, exist_ok=True)
        record_path = (report_dir or Path(tmp)) / "record.jsonl"
        err.print(f"[dim]dsh-conformance: {adapter} (seed {options.seed})[/dim]", markup=True)
        log = report_dir / "pytest.log" if report_dir is not None else None
        progress = Progress(err, verbose=verbose)
        plugins: list[Any] = [progress] + ([WorkerTotal(progress)] if workers else [])
        plugins.append(RunNotice())  # an older protocol's missed tests, at the top (D-292)
        status = runner.run(options, record_path, plugins=plugins, log=log)
        _finish_run(status, record_path, report_dir, fmt, out, err, fail_on, all_rows or verbose)


def _list_selection(options: Any, fmt: str, out: Any, err: Any) -> None:
    """``--collect-only``: the tests the selection would run, one per line (stdout)."""
    from dsh_conformance import runner

    tests = runner.selected(options)
    if fmt == "json":
        from dsh_conformance.reporting.escape import json_text

        rows = [{"id": t.nodeid, "requirements": list(t.requirements)} for t in tests]
        click.echo(json_text(rows))
    else:
        from dsh_conformance.reporting.escape import for_terminal

        for test in tests:
            click.echo(f"{for_terminal(test.nodeid)}\t{' '.join(test.requirements)}")
    err.print(f"{len(tests)} tests would run", markup=False, highlight=False)
    if not tests:
        sys.exit(5)


def _finish_run(
    status: int,
    record_path: Path,
    report_dir: Path | None,
    fmt: str,
    out: Any,
    err: Any,
    fail_on: str = "seed",
    all_rows: bool = False,
) -> None:
    from dsh_conformance import signals
    from dsh_conformance.record import load_record, settle_exit_status
    from dsh_conformance.reporting.exitstatus import run_exit_status
    from dsh_conformance.reporting.problems import run_problems

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
            if report_dir is not None:  # a CI publisher shows red and says why, not "no results"
                for path in _write_reports(record_path, report_dir):
                    err.print(f"[dim]wrote {path}[/dim]")
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
    if received is None and status == 4:  # pytest's usage error: an option it rejected
        _fail("usage", "pytest rejected the selection (see the message above)", status=EX_USAGE)
    if received is None and status in (2, 3):
        if report_dir is not None:  # what ran, and that the run stopped: the footer says why
            settle_exit_status(record_path, EX_SOFTWARE if status == 3 else 2)
            for path in _write_reports(record_path, report_dir):
                err.print(f"[dim]wrote {path}[/dim]")
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
    _print_record(record, fmt, out, all_rows)
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
