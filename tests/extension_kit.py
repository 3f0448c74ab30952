"""The C accelerator (model/_jsfast.c) as the tests see it: the built module or ``None``,
and the marker for a test that needs it, which skips only off CI (CI must build it, so the
speed the reports claim is the speed CI measured)."""

from __future__ import annotations

import os

import pytest

try:
    from dsh_conformance.model import _jsfast
except ImportError:  # pragma: no cover - depends on the build
    _jsfast = None  # type: ignore[assignment]

needs_extension = pytest.mark.skipif(
    _jsfast is None and os.environ.get("CI", "") in ("", "false", "0"),
    reason="the C accelerator is not built here (a C compiler is needed; CI requires it)",
)
