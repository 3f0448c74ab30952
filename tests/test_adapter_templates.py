"""The adapter templates in docs/templates/ are real: each passes ``smoke``, and the Python
one gets a complete first report (issue 37 item 5).

Catches: a template that drifts from the protocol (a version the harness no longer runs,
an op of a declared capability missing, unknown ops not typed, replies out of order, a
lone surrogate mangled) and a ``run`` that cannot produce a report from one.  The Node
template needs Node: skipped locally with the reason when it is absent, a failure in CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_conformance.adapters.contract import PROTOCOL_VERSION
from dsh_conformance.cli import main

TEMPLATES = Path(__file__).resolve().parents[1] / "docs" / "templates"
CHECKS = ("handshake", "uri ops", "unknown op", "lone surrogate", "pipelining", "reset")


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail("Node is required in CI (docs/templates/adapter.mjs must be checked)")
        pytest.skip("node is not installed: docs/templates/adapter.mjs cannot be run")
    return found


def smoke(command: str) -> str:
    result = CliRunner().invoke(main, ["smoke", "--adapter", f"subprocess:{command}"])
    assert result.exit_code == 0, result.stdout
    for check in CHECKS:
        assert re.search(rf"{check}\s*│ ok", result.stdout), (check, result.stdout)
    return result.stdout


def test_the_python_template_passes_smoke() -> None:
    smoke(f"{sys.executable} {TEMPLATES / 'adapter.py'}")


def test_the_node_template_passes_smoke() -> None:
    smoke(f"{node()} {TEMPLATES / 'adapter.mjs'}")


@pytest.mark.parametrize("name", ["adapter.py", "adapter.mjs"])
def test_the_templates_speak_the_current_protocol(name: str) -> None:
    text = (TEMPLATES / name).read_text(encoding="utf-8")
    assert re.search(rf"^(const )?PROTOCOL = {PROTOCOL_VERSION}\b", text, re.M), name
    assert "DSH_UNSUPPORTED_OPERATION" in text
    assert "DSH_PROTOCOL_MISMATCH" in text


def test_the_python_template_gets_a_complete_first_report(tmp_path: Path) -> None:
    adapter = f"subprocess:{sys.executable} {TEMPLATES / 'adapter.py'}"
    result = CliRunner().invoke(
        main, ["run", "--adapter", adapter, "--capability", "uri", "--report-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.stdout
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["complete"] is True
    assert report["verdicts"]["seed"]["passed"] is True
    statuses = {r["id"]: r["status"] for r in report["requirements"]}
    assert statuses["URI-001"] == "pass"
    assert statuses["MENTION-001"] == "pass"
