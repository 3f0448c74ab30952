"""The accelerator's CI forms, cheap enough for every run (issue 26; D-209).

- the C under AddressSanitizer + UBSan (tools/sanitize.sh, quick Hypothesis profile),
  where gcc and libasan exist;
- a build without a C compiler: the install still succeeds, and without the extension
  the suite runs on the pure forms;
- a representative slice of the conformance suite on the pure path (URI, mention)
  (``DSH_CONFORMANCE_PURE=1``), which must pass as the accelerated run does.

The long forms (every test file under the sanitizers, the differential tests with a fresh
seed and thousands of examples) are the non-blocking job in
.github/workflows/accelerator.yml; CONTRIBUTING.md gives the commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _libasan() -> bool:
    if shutil.which("gcc") is None:
        return False
    found = subprocess.run(
        ["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return os.path.isabs(found) and os.path.exists(found)


#: The tests the quick sanitizer form runs: every accelerated function against its twin.
SANITIZED = ("tests/test_accelerator.py", "tests/test_plain_projection.py")


@pytest.mark.skipif(not _libasan(), reason="gcc with libasan is needed for the sanitizer build")
def test_the_accelerator_is_clean_under_asan_and_ubsan() -> None:
    env = {**os.environ, "DSH_HYPOTHESIS_PROFILE": "quick"}
    done = subprocess.run(
        [str(ROOT / "tools" / "sanitize.sh"), sys.executable, "--", *SANITIZED],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "sanitize: clean" in done.stdout


def test_the_suite_builds_without_a_c_compiler(tmp_path: Path) -> None:
    """The extension is optional: with no working compiler the build succeeds without it."""
    env = {**os.environ, "CC": "false", "LDSHARED": "false"}
    done = subprocess.run(
        [sys.executable, "setup.py", "-q", "build", "--build-base", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    built = {p.name for p in tmp_path.rglob("*") if p.is_file()}
    assert "jsstr.py" in built
    assert not [name for name in built if name.startswith("_jsfast") and name.endswith(".so")]


def test_without_the_extension_the_pure_forms_are_used() -> None:
    """What a machine without a compiler runs: the import fails, jsstr falls back."""
    code = (
        "import sys\n"
        "sys.modules['dsh_conformance.model._jsfast'] = None  # as if never built\n"
        "from dsh_conformance.model import jsstr, uri\n"
        "assert jsstr._FAST is None\n"
        "assert uri.decode(uri.encode('\\ud800x')) == '\\ud800x'\n"
        "print('pure')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pure"


def test_a_conformance_slice_passes_on_the_pure_path(tmp_path: Path) -> None:
    """The URI, mention and JS-string requirements (the codec, the scans and find are
    their hot paths), with every accelerated function on its pure form: the same verdict
    as the accelerated runs give."""
    env = {**os.environ, "DSH_CONFORMANCE_PURE": "1", "DSH_HYPOTHESIS_PROFILE": "quick"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dsh_conformance.cli",
            "run",
            "--adapter",
            "reference",
            "--report-dir",
            str(tmp_path),
            "--fail-on",
            "all",
            *("-r", "URI-*", "-r", "MENTION-*", "-r", "JS-*"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "100.0% of applicable tests pass" in done.stdout
