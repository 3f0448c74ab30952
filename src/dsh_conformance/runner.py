"""Run the conformance package with pytest, in-process, isolated from the caller's tree.

The CLI never shells out: it calls ``pytest.main`` on ``--pyargs
dsh_conformance.conformance`` with its own ini file and rootdir, so whatever pytest
configuration the current directory holds cannot change the suite, and test ids come
out as ``conformance/<file>::<test>`` on every install.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import secrets
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

__all__ = [
    "INI",
    "CollectedTest",
    "RunOptions",
    "collect",
    "new_seed",
    "pytest_args",
    "run",
    "selected",
]

import attrs
import pytest
from attrs import frozen

from dsh_conformance import options as run_options
from dsh_conformance.options import RunOptions

#: The pytest configuration of a harness run (the suite's markers; unknown marks fail).
INI: Final = """\
[pytest]
markers =
    req(*ids): requirement ids from spec/ that this test checks
    capability(name): adapter capability the test needs
    differential: compares the implementation with the reference model
filterwarnings =
    error::pytest.PytestUnknownMarkWarning
"""


def new_seed() -> int:
    """A fresh Hypothesis seed: every CLI run is seeded, so every run can be replayed."""
    return secrets.randbelow(2**32)


def _setup(workdir: Path) -> list[str]:
    from dsh_conformance import suite

    ini = workdir / "pytest.ini"
    ini.write_text(INI, encoding="utf-8")
    root = suite.conformance_root().parent
    return [
        "--pyargs",
        "dsh_conformance.conformance",
        "-c",
        str(ini),
        "--rootdir",
        str(root),
        "--import-mode=importlib",
        "-p",
        "no:cacheprovider",
        # The suite has no benchmarks; installed beside xdist, pytest-benchmark would warn
        # once per process on stderr that a parallel run disables it.
        "-p",
        "no:benchmark",
        "-qq",
        "--no-header",
        "--no-summary",
    ]


def pytest_args(options: RunOptions, record: Path, workdir: Path) -> list[str]:
    """The full pytest command line of a run writing its record to *record*."""
    given = attrs.evolve(options, record=str(record))
    return _setup(workdir) + run_options.pytest_args(given)


def run(
    options: RunOptions, record: Path, plugins: Sequence[Any] = (), log: Path | None = None
) -> int:
    """Run the suite; return pytest's exit status.  Results are in *record*.

    pytest's own terminal output (kept: assertion explanations need its writer) goes to
    *log* instead of stdout, which belongs to the CLI's data.
    """
    from dsh_conformance.profile_imports import forget_other_profiles
    from dsh_conformance.profiles import register_profiles

    register_profiles()
    env = (os.environ.get("CI"), os.environ.get("DSH_HYPOTHESIS_PROFILE"))
    forget_other_profiles((options.hypothesis_profile, options.max_examples, env))
    output = io.StringIO()
    # What exists before the run (imports, earlier runs in this process) is not the run's
    # garbage: frozen, pytest's collections at the end do not walk it again (it was ~1 s
    # a run in a process that had run others).
    gc.collect()
    gc.freeze()
    try:
        with tempfile.TemporaryDirectory(prefix="dsh-run-") as tmp:
            args = pytest_args(options, record, Path(tmp))
            with contextlib.redirect_stdout(output):
                return int(pytest.main(args, plugins=list(plugins)))
    finally:
        gc.unfreeze()
        if log is not None:
            log.write_text(output.getvalue(), encoding="utf-8")


@frozen
class CollectedTest:
    """A test as collection sees it: for traceability and ``spec``."""

    nodeid: str
    requirements: tuple[str, ...]
    capabilities: tuple[str, ...]
    #: Judges inputs chosen in advance, whatever the seed (D-401, ``fixedness``).
    fixed: bool = False


def collect(spec_profile: str = "seed") -> list[CollectedTest]:
    """Every conformance test of *spec_profile* with the requirements it cites."""
    collector = _Selected()
    with tempfile.TemporaryDirectory(prefix="dsh-collect-") as tmp:
        args = [*_setup(Path(tmp)), "--collect-only", "--dsh-spec-profile", spec_profile]
        args.append("--snapshot-warn-unused")  # syrupy: nothing runs, so all look unused
        with contextlib.redirect_stdout(io.StringIO()):
            status = pytest.main(args, plugins=[collector])
    if status not in (0, 5):
        from dsh_conformance.errors import HarnessError

        raise HarnessError(
            "collection-failed",
            f"collecting the conformance suite failed (pytest status {status})",
            hint="run `python -m pytest --pyargs dsh_conformance.conformance --collect-only`",
        )
    return collector.tests


class _Selected:
    """The conformance items left after every filter (-r, -c, -k, --test, the spec
    profile), with the requirements and capabilities each cites."""

    def __init__(self) -> None:
        self.tests: list[CollectedTest] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from dsh_conformance import suite
        from dsh_conformance.fixedness import is_fixed

        root = suite.conformance_root()
        for item in session.items:
            if suite.is_conformance_item(item):
                reqs = tuple(suite.requirement_ids(item))
                test_id = suite.stable_test_id(item, root)
                fixed = is_fixed(getattr(item, "obj", None))
                caps = suite.capabilities_of(item)
                self.tests.append(CollectedTest(test_id, reqs, caps, fixed))


def selected(options: RunOptions) -> list[CollectedTest]:
    """The tests a run with *options* would run (``run --collect-only``), running none."""
    from dsh_conformance.errors import HarnessError

    chosen = _Selected()
    with tempfile.TemporaryDirectory(prefix="dsh-collect-") as tmp:
        args = pytest_args(options, Path(tmp) / "record.jsonl", Path(tmp))
        args += ["--collect-only", "--snapshot-warn-unused"]
        with contextlib.redirect_stdout(io.StringIO()):
            status = pytest.main(args, plugins=[chosen])
    if status not in (0, 5):
        raise HarnessError(
            "collection-failed",
            f"collecting the selection failed (pytest status {status})",
            hint="check the filters; `dsh-conformance run` without --collect-only says more",
        )
    return chosen.tests
