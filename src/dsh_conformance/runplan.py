"""Runs that follow an earlier record, and checks made before a long run starts.

``run --resume RECORD`` continues an interrupted run: the same adapter, seed,
Hypothesis and spec profiles, filters and manifest (from the record's header), skipping
every test the record already has; the new record holds the earlier results too, so it
is the record of one complete run.  ``run --last-failed RECORD`` reruns only the tests
that failed there (decision D-137).  Options given explicitly win over the header.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from attrs import frozen

from dsh_conformance.errors import EX_CANTCREAT, EX_CONFIG, EX_NOTHING, EX_USAGE, HarnessError
from dsh_conformance.outcomes import FAILING
from dsh_conformance.profiles import PROFILES

if TYPE_CHECKING:
    from dsh_conformance.options import RunOptions


@frozen
class Plan:
    """The selection and configuration of an earlier run, from its record header."""

    adapter: str
    seed: int | None
    hypothesis_profile: str | None
    spec_profile: str
    requirements: tuple[str, ...]
    capabilities: tuple[str, ...]
    keyword: str
    expectations: str | None
    #: The header's gate (D-175): capabilities required, whether an empty run may pass.
    require: tuple[str, ...] = ()
    allow_empty: bool = False
    #: Exact test ids the run selected (``--test``).
    tests: tuple[str, ...] = ()
    #: ``--max-examples`` when the run was given it (the header's ``max_examples_option``).
    max_examples: int | None = None

    def apply(self, options: RunOptions, given: Set[str], *, manifest: bool) -> RunOptions:
        """*options* completed from the header: the adapter, seed and profiles unless
        given on the command line, the filters and gate unless given, the manifest
        unless one is given or *manifest* is false (``--no-expectations``)."""
        return attrs.evolve(
            options,
            adapter=options.adapter if "adapter" in given else self.adapter,
            seed=options.seed if "seed" in given else self.seed,
            hypothesis_profile=(
                options.hypothesis_profile
                if "hypothesis_profile" in given
                else self.hypothesis_profile
            ),
            spec_profile=options.spec_profile if "spec_profile" in given else self.spec_profile,
            requirements=options.requirements or self.requirements,
            capabilities=options.capabilities or self.capabilities,
            keyword=options.keyword or self.keyword,
            tests=options.tests or self.tests,
            max_examples=options.max_examples or self.max_examples,
            require=options.require or self.require,
            allow_empty=options.allow_empty or self.allow_empty,
            expectations=(
                self.expectations
                if options.expectations is None and self.expectations and manifest
                else options.expectations
            ),
        )


def from_record(path: Path, *, rerun_failed: bool) -> Plan:
    """The plan of the run recorded at *path* (``RecordError`` if unreadable)."""
    from dsh_conformance.record import load_record

    record = load_record(path)
    if rerun_failed and not any(t.outcome in FAILING for t in record.tests):
        raise HarnessError(
            "nothing-failed",
            f"{path}: no test failed in this record, so there is nothing to rerun",
            exit_status=EX_NOTHING,
        )
    if not rerun_failed and record.ending == "complete":
        raise HarnessError(
            "nothing-to-resume",
            f"{path}: the run is complete, so there is nothing to resume",
            hint="--last-failed reruns its failures",
            exit_status=EX_USAGE,
        )
    header = record.header
    hypothesis: dict[str, Any] = dict(header.get("hypothesis") or {})
    filters: dict[str, Any] = dict(header.get("filters") or {})
    seed = hypothesis.get("seed")
    profile = hypothesis.get("profile")
    gate: dict[str, Any] = dict(header.get("gate") or {})
    return Plan(
        adapter=str((header.get("adapter") or {}).get("name") or "reference"),
        seed=int(str(seed)) if str(seed).isdigit() else None,
        hypothesis_profile=str(profile) if profile in PROFILES else None,
        spec_profile=str(header.get("spec_profile") or "seed"),
        requirements=tuple(str(r) for r in filters.get("requirements") or ()),
        capabilities=tuple(str(c) for c in filters.get("capabilities") or ()),
        keyword=str(filters.get("keyword") or ""),
        expectations=str(header["expectations"]) if header.get("expectations") else None,
        require=tuple(str(c) for c in gate.get("require") or ()),
        allow_empty=bool(gate.get("allow_empty")),
        tests=tuple(str(t) for t in filters.get("tests") or ()),
        max_examples=_positive(hypothesis.get("max_examples_option")),
    )


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


def check_workers(workers: int | None) -> None:
    """``--workers`` needs pytest-xdist (a configuration error without it)."""
    if workers is None:
        return
    import importlib.util

    if importlib.util.find_spec("xdist") is None:
        raise HarnessError(
            "no-xdist",
            "--workers needs pytest-xdist, which is not installed",
            hint="python -m pip install 'dsh-conformance[parallel]'",
            exit_status=EX_CONFIG,
        )


def _cannot(option: str, path: Path, why: str) -> HarnessError:
    return HarnessError(
        "cannot-write",
        f"{option} {path}: {why}",
        hint="choose a path in a directory you can write",
        exit_status=EX_CANTCREAT,
    )


def check_writable_dir(path: Path, option: str) -> None:
    """Create *path* and prove a file can be written there, before the run starts."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".dsh-probe-"):
            pass
    except OSError as exc:
        raise _cannot(option, path, exc.strerror or str(exc)) from exc


def check_writable_file(path: Path, option: str) -> None:
    """*path* can be written (created, or replaced), before the run starts."""
    if path.is_dir():
        raise _cannot(option, path, "is a directory")
    check_writable_dir(path.parent, option)
    if path.exists() and not os.access(path, os.W_OK):
        raise _cannot(option, path, "is not writable")


def private_copy(path: Path) -> Path:
    """A copy of an earlier record that the new run cannot overwrite (same report dir)."""
    import atexit
    import shutil

    handle, name = tempfile.mkstemp(prefix="dsh-earlier-", suffix=".jsonl")
    os.close(handle)
    shutil.copyfile(path, name)
    atexit.register(lambda: Path(name).unlink(missing_ok=True))
    return Path(name)


def check_selection(
    adapter: str,
    requirements: Sequence[str],
    capabilities: Sequence[str],
    require: Sequence[str],
) -> None:
    """Configuration errors before any collection (exit 78, D-177): a malformed or
    unknown adapter name, a ``-r`` pattern no requirement id matches, an unknown
    capability given to ``-c`` or ``--require``."""
    import fnmatch

    from dsh_conformance.adapters.contract import CAPABILITIES
    from dsh_conformance.adapters.registry import check_name

    check_name(adapter)
    for option, names in (("--capability", capabilities), ("--require", require)):
        unknown = [c for c in names if c not in CAPABILITIES]
        if unknown:
            raise HarnessError(
                "unknown-capability",
                f"{option} {', '.join(unknown)}: no such capability",
                hint=f"capabilities: {', '.join(CAPABILITIES)}",
                exit_status=EX_CONFIG,
            )
    if requirements:
        from dsh_conformance.spec import load_catalog

        ids = list(load_catalog().requirements)
        unmatched = [p for p in requirements if not fnmatch.filter(ids, p)]
        if unmatched:
            raise HarnessError(
                "unknown-requirement",
                f"--requirement {', '.join(unmatched)}: matches no requirement id",
                hint="run `dsh-conformance spec` to list them (globs: URI-*)",
                exit_status=EX_CONFIG,
            )


def check_keyword(keyword: str) -> None:
    """A ``-k`` expression pytest cannot parse is a usage error (exit 2), said before the
    run starts, never an aborted run."""
    if not keyword:
        return
    from _pytest.mark import expression  # pytest's own parser: no second grammar here

    try:
        expression.Expression.compile(keyword)
    except SyntaxError as exc:  # pytest 9; older pytest raised its own ParseError
        why = f"{exc.msg} at column {exc.offset}" if exc.offset else str(exc.msg)
    except Exception as exc:  # any rejection is the same usage error
        why = str(exc)
    else:
        return
    raise HarnessError(
        "usage",
        f"-k {keyword}: not a pytest -k expression ({why})",
        hint="join names with and, or, not and parentheses: -k 'encode and not decode'",
        exit_status=EX_USAGE,
    )
