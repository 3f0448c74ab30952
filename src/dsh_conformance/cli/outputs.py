"""The report set of a run, written whole or not at all.

The reports, rendered (``finish.render_reports``), are written into a staging folder
beside them and moved into place; a write that fails (a ``junit.xml`` blocked by a
folder, a full disk, a file that cannot be replaced) removes what it moved and the reports of the
earlier run the record beside them no longer belongs to.  So a folder never holds a
mixed set, and never a green report of a run that ended otherwise (issue 43).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from dsh_conformance.errors import EX_CANTCREAT, HarnessError

#: The reports of a run, in the order they are written and named.
REPORTS: Final = ("report.md", "junit.xml", "report.html", "report.json", "badge.json", "badge.md")
#: The folder ``run`` writes its reports to when no ``--report-dir`` is given.
DEFAULT_DIR: Final = "dsh-report"
#: Where the default folder is instead (the project's own tests give each test one).
DEFAULT_DIR_VARIABLE: Final = "DSH_REPORT_DIR"


def default_dir() -> Path:
    """``$DSH_REPORT_DIR``, else ``dsh-report`` in the current folder."""
    return Path(os.environ.get(DEFAULT_DIR_VARIABLE) or DEFAULT_DIR)


def _cannot(path: Path, exc: OSError) -> HarnessError:
    return HarnessError(
        "cannot-write",
        f"{path}: {exc.strerror or exc}",
        hint="no report of this run was written: free the path or choose another --report-dir",
        exit_status=EX_CANTCREAT,
    )


def withdraw(report_dir: Path) -> None:
    """Remove the reports in *report_dir* (files only: a folder in the way stays)."""
    for name in REPORTS:
        path = report_dir / name
        if path.is_file() or path.is_symlink():
            path.unlink(missing_ok=True)


def publish(outputs: dict[str, str], report_dir: Path) -> list[Path]:
    """Write *outputs* into *report_dir* whole, or raise ``cannot-write`` (73) leaving
    none of the set there; the paths written, in order."""
    try:
        staging = Path(tempfile.mkdtemp(prefix=".dsh-reports-", dir=report_dir))
    except OSError as exc:
        withdraw(report_dir)
        raise _cannot(report_dir, exc) from exc
    written: list[Path] = []
    try:
        for name, text in outputs.items():
            try:
                (staging / name).write_text(text, encoding="utf-8")
            except OSError as exc:
                raise _cannot(report_dir / name, exc) from exc
        for name in outputs:  # a folder in the way fails before anything moves
            if (report_dir / name).is_dir():
                raise _cannot(report_dir / name, IsADirectoryError(21, "Is a directory"))
        for name in outputs:
            target = report_dir / name
            try:
                os.replace(staging / name, target)
            except OSError as exc:
                raise _cannot(target, exc) from exc
            written.append(target)
    except HarnessError:
        withdraw(report_dir)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return written
