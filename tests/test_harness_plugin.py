"""The pytest plugin loads in every pytest run of the environment: it must stay light."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "hypothesis",
    "jsonschema",
    "rich",
    "click",
    "dsh_conformance.spec",
    "dsh_conformance.adapters.reference",
    "dsh_conformance.harness",
)


def test_importing_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, dsh_conformance.pytest_plugin as p; "
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_cli_module_imports_nothing_heavy() -> None:
    code = (
        "import sys, dsh_conformance.cli; "
        f"print([m for m in {HEAVY[:3] + HEAVY[4:]!r} if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
