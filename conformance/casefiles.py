"""Data files of static cases under ``conformance/cases/``, selected by their format tag."""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any


def cases(format_tag: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(file stem, case)`` for every case of every file whose format is *format_tag*."""
    folder = resources.files("dsh_conformance.conformance") / "cases"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        data = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("format") == format_tag:
            for case in data["cases"]:
                yield entry.name.removesuffix(".json"), case
