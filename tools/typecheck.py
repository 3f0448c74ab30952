"""Run mypy on the dsh_conformance package as installed names see it.

The package is assembled from several top-level folders by setuptools' package_dir
mapping, which mypy cannot follow; this builds a throwaway tree of symlinks with the
import layout and checks that.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAPPING = {"model": "model", "spec": "spec", "conformance": "conformance", "adapters": "adapters"}


def build(tree: Path) -> Path:
    pkg = tree / "dsh_conformance"
    pkg.mkdir()
    for entry in (ROOT / "src" / "dsh_conformance").iterdir():
        (pkg / entry.name).symlink_to(entry)
    for name, folder in MAPPING.items():
        (pkg / name).symlink_to(ROOT / folder, target_is_directory=True)
    return pkg


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        pkg = build(Path(tmp))
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            str(pkg),
        ]
        return subprocess.call(cmd, cwd=tmp)


if __name__ == "__main__":
    raise SystemExit(main())
