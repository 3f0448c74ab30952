"""One options value from the CLI down to the plugin (options.py).

The runner writes a ``RunOptions`` as pytest's command line (xdist workers read that
again); the harness reads it back from pytest's configuration.  A field one side
forgets, or spells differently, would silently drop a filter: the round trip catches
it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from dsh_conformance import options as run_options
from dsh_conformance.options import RunOptions

FULL = RunOptions(
    adapter="subprocess:node a.mjs",
    requirements=["URI-*", "SER-001"],
    capabilities=["uri"],
    keyword="encode and not decode",
    tests=["conformance/test_uri.py::test_x[a]"],
    hypothesis_profile="quick",
    seed=12345,
    spec_profile="release",
    expectations="m.toml",
    write_expectations="out.toml",
    timeout=2.5,
    handshake_timeout=9.0,
    max_examples=7,
    validate=True,
    exitfirst=True,
    require=["uri", "prepare"],
    allow_empty=True,
    resume="earlier.jsonl",
    record="record.jsonl",
)


class _Seen:
    def __init__(self) -> None:
        self.options: RunOptions | None = None

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        self.options = run_options.of_config(config)


def _read_back(args: list[str], where: Path) -> RunOptions:
    seen = _Seen()
    pytest.main(
        [str(where), "--collect-only", "-qq", "-p", "no:cacheprovider", *args], plugins=[seen]
    )
    assert seen.options is not None
    return seen.options


def test_every_option_survives_the_trip_through_pytest(tmp_path: Path) -> None:
    back = _read_back(run_options.pytest_args(FULL), tmp_path)
    assert back == FULL


def test_defaults_read_back_as_defaults(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.delenv("DSH_ADAPTER", raising=False)
    assert _read_back(run_options.pytest_args(RunOptions()), tmp_path) == RunOptions()


def test_each_field_names_its_pytest_option_once() -> None:
    flags = [f.metadata["flag"] for f in attrs.fields(RunOptions)]
    assert len(flags) == len(set(flags))
    assert set(run_options._ORDER) == set(attrs.fields_dict(RunOptions))


def test_workers_and_a_seed_of_zero_are_passed_on() -> None:
    args = run_options.pytest_args(RunOptions(workers=2, seed=0, last_failed="r.jsonl"))
    assert args[-4:] == ["--dsh-last-failed", "r.jsonl", "-n", "2"]
    assert args[args.index("--hypothesis-seed") :][:2] == ["--hypothesis-seed", "0"]
