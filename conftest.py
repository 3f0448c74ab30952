"""This project's own test run (not the shipped suite): one bytecode cache for all of it.

The tests start a few hundred Python processes (CLI runs, subprocess adapters, the zoo's
workers).  Under ``PYTHONDONTWRITEBYTECODE`` (set in many CI images, and in ours) none of
them may write bytecode, so each one compiled this package from source and re-rewrote the
asserts of every conformance module it collected: about 1.8 s of CPU per CLI run, most
of the suite's cost on a fresh clone.  Here every process shares one cache outside the
source tree (``PYTHONPYCACHEPREFIX``), made per run and removed after it, so the checkout
stays clean and the first process to compile a module compiles it for all.  A cache the
caller already chose (``PYTHONPYCACHEPREFIX`` set) is used as it is.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

_OWNED: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    if not prefix:
        # The xdist controller runs this before it starts its workers, which inherit it.
        prefix = tempfile.mkdtemp(prefix="dsh-conformance-pyc-")
        _OWNED.append(prefix)
        os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # This process too: the import system and pytest's assertion rewriter read both at
    # each import, so the in-process runs share the cache as well.
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def pytest_unconfigure(config: pytest.Config) -> None:
    for prefix in _OWNED:
        shutil.rmtree(prefix, ignore_errors=True)
