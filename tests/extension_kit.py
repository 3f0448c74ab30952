"""The C accelerator (model/_jsfast.c) as the tests see it: the built module or ``None``,
and the marker for a test that needs it, which skips only off CI (CI must build it, so the
speed the reports claim is the speed CI measured)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from dsh_conformance.model import jsstr

try:
    from dsh_conformance.model import _jsfast
except ImportError:  # pragma: no cover - depends on the build
    _jsfast = None  # type: ignore[assignment]

needs_extension = pytest.mark.skipif(
    _jsfast is None and os.environ.get("CI", "") in ("", "false", "0"),
    reason="the C accelerator is not built here (a C compiler is needed; CI requires it)",
)


@contextlib.contextmanager
def jsstr_path(fast: bool) -> Iterator[None]:
    """jsstr on the accelerated path (even under DSH_CONFORMANCE_PURE=1), or the pure one,
    for the duration of the block."""
    saved, jsstr._FAST = jsstr._FAST, (_jsfast if fast else None)
    try:
        yield
    finally:
        jsstr._FAST = saved
