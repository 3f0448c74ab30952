"""What a run shows on stderr while it goes: which test runs, how many fail, and when
Hypothesis is shrinking a failing example (D-312)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any


class _Collected:
    """What ``Progress.pytest_collection_finish`` reads of a session: its items."""

    def __init__(self, items: Sequence[str]) -> None:
        self.items = items


class WorkerTotal:
    """Under xdist the controller collects nothing: the progress total comes from the
    first worker's collection (registered only with --workers, when the hook exists)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        if not self.progress.total:
            self.progress.pytest_collection_finish(_Collected(ids))


def _short(nodeid: str) -> str:
    """``test_file.py::test_name[param]`` without the package folder."""
    return nodeid.rsplit("/", 1)[-1]


class Progress:
    """A rich progress bar naming the running test on a terminal; without one (CI logs),
    a plain line at every tenth of the run; with ``-v``, a line per test."""

    def __init__(self, console: Any, *, verbose: bool = False) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        self.progress = Bar(
            TextColumn("[bold]running"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            console=console,
            transient=True,
        )
        self.task = self.progress.add_task("run", total=None, status="collecting")
        self.failed = 0
        self.done = 0
        self.total = 0
        self.verbose = verbose
        self.plain = verbose or not console.is_terminal
        self.console = console
        self.current = ""
        self.outcome = ""
        self.started = time.monotonic()

    def _line(self, text: str) -> None:
        from dsh_conformance.reporting.escape import for_terminal

        self.console.print(for_terminal(text), markup=False, highlight=False, soft_wrap=True)

    def _status(self, note: str = "") -> None:
        from rich.markup import escape

        failing = f"{self.failed} failing " if self.failed else ""
        what = failing + (note or _short(self.current))
        room = max(12, self.console.width - 44)  # the name never pushes the bar away
        what = escape(what if len(what) <= room else what[: room - 1] + "…")
        if failing:
            what = what.replace(failing, f"[red]{failing}[/red]", 1)
        self.progress.update(self.task, status=what)

    def pytest_sessionstart(self, session: Any) -> None:
        from dsh_conformance import shrinking

        shrinking.on_shrink(self.shrinking)

    def pytest_collection_finish(self, session: Any) -> None:
        self.total = len(session.items)
        self.progress.update(self.task, total=self.total, status="")
        if not self.plain:
            self.progress.start()

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.current = nodeid
        self.outcome = "pass"
        self.started = time.monotonic()
        self._status()

    def shrinking(self) -> None:
        """Hypothesis found a failing example and now looks for a smaller one."""
        from dsh_conformance.shrinking import shrink_seconds

        self._status(f"shrinking {_short(self.current)}")
        if self.plain:
            self._line(
                f"shrinking: {_short(self.current)} failed; looking for a smaller failing "
                f"input (at most {shrink_seconds():g} s)"
            )

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            if self.outcome != "FAIL":
                self.failed += 1
            self.outcome = "FAIL"
            self._status()
        elif report.skipped and self.outcome == "pass":
            self.outcome = "skip"

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        self.progress.advance(self.task)
        self.done += 1
        if self.verbose:
            took = time.monotonic() - self.started
            self._line(f"{self.outcome:4} {nodeid} ({took:.2f} s)")
            return
        step = max(1, self.total // 10)
        if self.plain and (self.done % step == 0 or self.done == self.total):
            self._line(f"running: {self.done}/{self.total} tests, {self.failed} failing")

    def pytest_sessionfinish(self, session: Any) -> None:
        from dsh_conformance import shrinking

        shrinking.forget(self.shrinking)
        self.progress.stop()
