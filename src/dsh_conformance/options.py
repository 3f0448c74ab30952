"""The run's options: one frozen value, built once and passed down.

The CLI builds a ``RunOptions`` from its command line; the runner turns it into pytest's
command line (``pytest_args``), because pytest-xdist workers re-read that; inside pytest
the harness reads it back from the configuration once (``of_config``), so every room
below the hooks sees the same typed value instead of reading options one by one.  Each
field names its pytest option in its metadata: one declaration serves both directions.
Variants are made with ``attrs.evolve`` (a resumed run, a record path).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Final

import attrs
from attrs import field, frozen

if TYPE_CHECKING:
    import pytest


def _strings(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(items)


def _flag(flag: str, dest: str, kind: str = "value") -> dict[str, str]:
    """Field metadata: the pytest *flag*, its ``config.getoption`` *dest*, and its *kind*
    (``value``, ``many``: repeated, ``switch``: a flag without a value)."""
    return {"flag": flag, "dest": dest, "kind": kind}


@frozen
class RunOptions:
    """Everything that selects and configures one run (the CLI's ``run`` and
    ``pytest --dsh-…`` alike)."""

    adapter: str = field(default="reference", metadata=_flag("--dsh-adapter", "dsh_adapter"))
    requirements: tuple[str, ...] = field(
        default=(),
        converter=_strings,
        metadata=_flag("--dsh-requirement", "dsh_requirement", "many"),
    )
    capabilities: tuple[str, ...] = field(
        default=(), converter=_strings, metadata=_flag("--dsh-capability", "dsh_capability", "many")
    )
    keyword: str = field(default="", metadata=_flag("-k", "keyword"))
    #: Exact test ids (``--test``): a replay reruns one case, not every match of a name.
    tests: tuple[str, ...] = field(
        default=(), converter=_strings, metadata=_flag("--dsh-test", "dsh_test", "many")
    )
    hypothesis_profile: str | None = field(
        default=None, metadata=_flag("--hypothesis-profile", "hypothesis_profile")
    )
    #: A string only when plain pytest was given a seed that is not a number.
    seed: int | str | None = field(
        default=None, metadata=_flag("--hypothesis-seed", "hypothesis_seed")
    )
    spec_profile: str = field(
        default="seed", metadata=_flag("--dsh-spec-profile", "dsh_spec_profile")
    )
    expectations: str | None = field(
        default=None, metadata=_flag("--dsh-expectations", "dsh_expectations")
    )
    write_expectations: str | None = field(
        default=None, metadata=_flag("--dsh-write-expectations", "dsh_write_expectations")
    )
    timeout: float | None = field(default=None, metadata=_flag("--dsh-timeout", "dsh_timeout"))
    handshake_timeout: float | None = field(
        default=None, metadata=_flag("--dsh-handshake-timeout", "dsh_handshake_timeout")
    )
    max_examples: int | None = field(
        default=None, metadata=_flag("--dsh-max-examples", "dsh_max_examples")
    )
    validate: bool = field(
        default=False, metadata=_flag("--dsh-validate", "dsh_validate", "switch")
    )
    #: ``-x``: pytest stores it as ``maxfail`` 1.
    exitfirst: bool = field(default=False, metadata=_flag("-x", "maxfail", "switch"))
    require: tuple[str, ...] = field(
        default=(), converter=_strings, metadata=_flag("--dsh-require", "dsh_require", "many")
    )
    allow_empty: bool = field(
        default=False, metadata=_flag("--dsh-allow-empty", "dsh_allow_empty", "switch")
    )
    #: ``--resume``: the earlier record whose results this run carries over (D-137).
    resume: str | None = field(default=None, metadata=_flag("--dsh-resume", "dsh_resume"))
    #: ``--last-failed``: the earlier record whose failures are the only tests to run.
    last_failed: str | None = field(
        default=None, metadata=_flag("--dsh-last-failed", "dsh_last_failed")
    )
    #: pytest-xdist worker processes (``-n``), None for a serial run.
    workers: int | None = field(default=None, metadata=_flag("-n", "numprocesses"))
    #: Where the run record is written (``--dsh-record``), None for no record.
    record: str | None = field(default=None, metadata=_flag("--dsh-record", "dsh_record"))


#: The fields in pytest's command-line order (the record comes first after the adapter).
_ORDER: Final = (
    "adapter",
    "record",
    "spec_profile",
    "requirements",
    "capabilities",
    "tests",
    "keyword",
    "hypothesis_profile",
    "seed",
    "expectations",
    "write_expectations",
    "timeout",
    "max_examples",
    "handshake_timeout",
    "validate",
    "exitfirst",
    "require",
    "allow_empty",
    "last_failed",
    "resume",
    "workers",
)


def pytest_args(options: RunOptions) -> list[str]:
    """*options* as pytest's command line (what an xdist worker reads again)."""
    fields = attrs.fields_dict(RunOptions)
    args: list[str] = []
    for name in _ORDER:
        meta, value = fields[name].metadata, getattr(options, name)
        if meta["kind"] == "many":
            for item in value:
                args += [meta["flag"], str(item)]
        elif meta["kind"] == "switch":
            args += [meta["flag"]] if value else []
        elif name == "adapter" or name == "spec_profile" or value not in (None, ""):
            args += [meta["flag"], str(value)]
    return args


@cache
def _key() -> pytest.StashKey[RunOptions]:
    import pytest  # not at import time: the CLI reads this module before pytest runs

    return pytest.StashKey[RunOptions]()


def of_config(config: pytest.Config) -> RunOptions:
    """The run's options as this pytest session was given them, read once per session."""
    found = config.stash.get(_key(), None)
    if found is None:
        found = _read(config)
        config.stash[_key()] = found
    return found


#: Fields whose pytest value is a path or a name: read back as text.
_TEXT: Final = frozenset(
    {
        "adapter",
        "spec_profile",
        "expectations",
        "write_expectations",
        "record",
        "resume",
        "last_failed",
        "hypothesis_profile",
    }
)


def _read(config: pytest.Config) -> RunOptions:
    values: dict[str, Any] = {}
    for name, spec in attrs.fields_dict(RunOptions).items():
        kind = spec.metadata["kind"]
        value = config.getoption(spec.metadata["dest"], None)
        if kind == "many":
            value = tuple(str(v) for v in value or ())
        elif kind == "switch":
            value = bool(value)
        elif name == "keyword":
            value = str(value or "")
        elif name == "seed" and isinstance(value, str) and value.isdigit():
            value = int(value)  # the CLI passes digits: a number, replayable as --seed
        elif name == "workers" and not isinstance(value, int):
            value = None  # xdist's "auto" and "logical" are xdist's to resolve
        elif name in _TEXT and value is not None:
            value = str(value)
        values[name] = spec.default if value is None else value
    return RunOptions(**values)
