"""The harness's pytest hooks: a thin layer, each hook calling into a room.

Selection (``selection``), outcomes (``classify``), what a failure keeps
(``evidence``), blame (``blame``), the manifest (``expected``) and the record's lines
(``recording``) live in their own modules; this one holds the session's state between
hooks and writes the record as the run goes.  Kept apart from ``pytest_plugin`` so that
module stays cheap to import.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from attrs import define, field

from dsh_conformance import suite
from dsh_conformance.errors import EX_CONFIG, EX_FAILURES, EX_SOFTWARE
from dsh_conformance.harness import blame, classify, evidence, expected, recording, selection
from dsh_conformance.harness.evidence import Evidence
from dsh_conformance.harness.selection import Earlier, ItemMeta
from dsh_conformance.options import RunOptions, of_config
from dsh_conformance.outcomes import FAILING, Outcome, fault_of, unreadable_of
from dsh_conformance.record import RecordWriter, TestResult

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Manifest


@define(eq=False)
class HarnessPlugin:
    """pytest hooks of the conformance harness, and the session's state between them."""

    config: pytest.Config
    meta: dict[str, ItemMeta] = field(factory=dict)
    progress: dict[str, Evidence] = field(factory=dict)
    manifest: Manifest | None = None
    tally: expected.Tally = field(factory=lambda: expected.Tally(None))
    full_collection: bool = False
    writer: RecordWriter | None = None
    results: list[TestResult] = field(factory=list)
    problems: list[dict[str, str]] = field(factory=list)
    started: float = field(factory=time.monotonic)
    signals: contextlib.ExitStack = field(factory=contextlib.ExitStack)
    #: ``--dsh-resume`` / ``--dsh-last-failed``: the earlier record this run follows.
    earlier: Earlier = field(factory=Earlier)

    @property
    def options(self) -> RunOptions:
        return of_config(self.config)

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from dsh_conformance import signals

        signals.reset()
        self.signals.enter_context(signals.interruptible())

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.signals.close()

    # --- selection ------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        conformance = [item for item in items if suite.is_conformance_item(item)]
        if not conformance:
            return
        from dsh_conformance import shrinking
        from dsh_conformance.spec import load_catalog

        shrinking.cap_shrinking()  # D-312: a failing test shrinks for seconds, not minutes
        catalog = load_catalog()
        self.earlier = selection.load_earlier(self.options)
        suite.check_traceability(conformance, catalog.requirements)
        self.full_collection = selection.covers_package(conformance, suite.conformance_root())
        self.manifest = expected.load(self.options, catalog.requirements, self._versions)
        self.tally = expected.Tally(self.manifest)
        chosen = selection.select(
            items, self.options, catalog.requirements, self.earlier, self.tally.entry_of
        )
        self.meta.update(chosen.meta)
        if chosen.removed:
            config.hook.pytest_deselected(items=chosen.removed)
            items[:] = chosen.kept

    def _versions(self) -> tuple[str, dict[str, str]]:
        """The handshake's version and components (D-188)."""
        try:
            info = suite.implementation(self.config).handshake.implementation
        except Exception:  # reported with its exit status once collection finishes
            return "", {}
        return info.version, info.component_versions

    # --- the record header: handshake once the selection is known -----------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # -k and other plugins deselect after us: keep what will actually run.
        final = {item.nodeid for item in session.items}
        self.meta = {k: v for k, v in self.meta.items() if k in final}
        if not self.meta or self.config.option.collectonly:
            return
        record = suite.record_path(self.config)  # an xdist worker writes its own part
        if record:
            self.writer = RecordWriter(record)
        name = self.options.adapter
        try:
            impl = suite.implementation(self.config)
        except Exception as exc:
            self._unavailable(name, exc)
        if self.writer is not None:
            adapter = recording.adapter_line(name, impl, suite.guard(self.config))
            self.writer.header(self._header(adapter))
        for result in self.earlier.carried.values():  # as if they had just run
            self._record(result)

    def _header(self, adapter: dict[str, Any]) -> dict[str, Any]:
        path = self.manifest.path if self.manifest else None
        carried = len(self.earlier.carried)
        return recording.header(self.options, adapter, path, len(self.meta), carried)

    def _unavailable(self, name: str, exc: Exception) -> NoReturn:
        """An implementation that cannot start: a record that says so, and pytest ends
        with the adapter's status (70), or configuration (78) for a bad name."""
        from dsh_conformance.adapters.wire import printable
        from dsh_conformance.model.errors import DshError, ErrorCode

        reason = printable(str(exc))
        if self.writer is not None:
            self.writer.header(self._header({"name": name, "error": reason}))
            self.writer.footer({"status": "aborted", "reason": reason})
            self.writer.close()
            self.writer = None
        self.meta.clear()
        bad_name = isinstance(exc, DshError) and exc.code == ErrorCode.INVALID_ARGUMENT
        pytest.exit(  # a factory that cannot make an adapter from its name: config (78)
            f"[adapter-unavailable] cannot start {name!r}: {reason}",
            returncode=EX_CONFIG if bad_name else EX_SOFTWARE,
        )

    # --- running --------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        meta = self.meta.get(item.nodeid)
        if meta is None:
            return
        from dsh_conformance import signals, unjudged
        from dsh_conformance.checks import take_passed, take_reviews

        if signals.received() is not None:
            raise KeyboardInterrupt  # its first KeyboardInterrupt was lost (D-136)
        guard = suite.guard(self.config)
        if guard is not None:
            guard.begin_test()
        self.progress[item.nodeid] = Evidence()
        take_reviews()  # nothing left over from an unrecorded test is this test's
        take_passed()
        unjudged.take()
        reason = expected.unsupported(meta.entry)
        if reason is not None:
            pytest.skip(reason)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        meta = self.meta.get(item.nodeid)
        state = self.progress.get(item.nodeid)
        if meta is None or state is None:
            return report
        if report.when == "teardown":
            outcome = classify.teardown_outcome(report, state.outcome)
            if outcome is not state.outcome:
                state.outcome = outcome
                state.message = evidence.short(
                    f"teardown failed: {report.longreprtext}", evidence.MESSAGE_LIMIT
                )
            return report
        if report.when == "setup" and report.passed:
            return report
        self._classify(report, call, meta, state, item)
        return report

    def _classify(
        self,
        report: pytest.TestReport,
        call: pytest.CallInfo[None],
        meta: ItemMeta,
        state: Evidence,
        item: pytest.Item | None = None,
    ) -> None:
        """One phase's outcome and evidence, then the manifest's view of it."""
        guard = suite.guard(self.config)
        exc = call.excinfo.value if call.excinfo is not None else None
        fault = guard.fault if guard is not None else None
        outcome = classify.outcome_of(report, exc, fault)
        if report.skipped:
            evidence.skipped(state, classify.skip_reason(report))
        elif not report.passed:
            self._failed(report, call, meta, state, item, exc, fault)
            if outcome in (Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL):
                state.blame = ()  # the adapter broke: no requirement is blamed (D-212)
        manifest = self.manifest
        allowed = manifest.expected_blame(meta.test_id, meta.requirements) if manifest else ()
        state.outcome = expected.apply(
            meta.entry, outcome, report, state, allowed=allowed, property_test=meta.property
        )

    def _failed(
        self,
        report: pytest.TestReport,
        call: pytest.CallInfo[None],
        meta: ItemMeta,
        state: Evidence,
        item: pytest.Item | None,
        exc: BaseException | None,
        fault: Any,
    ) -> None:
        state.blame, stray = blame.blame(exc, meta)
        self.problems += stray
        replay = blame.replay(self.options, meta.test_id)
        report.sections.append(("dsh-conformance", blame.explain(state.blame, replay)))
        traceback = report.longreprtext
        if call.excinfo is not None and item is not None:
            traceback = evidence.short_traceback(item, call.excinfo)
        evidence.failed(state, exc, traceback, blame.sentences(), replay)
        broke = fault_of(exc, fault) if exc is not None else None
        if broke is not None:
            evidence.faulted(state, broke, suite.guard(self.config))
        unreadable = unreadable_of(exc) if exc is not None and broke is None else None
        if unreadable is not None:
            evidence.unreadable(state, unreadable)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self.progress.get(report.nodeid)
        if state is not None:
            state.duration += report.duration

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int, str]) -> None:
        from dsh_conformance import unjudged
        from dsh_conformance.checks import take_passed, take_reviews

        meta = self.meta.get(nodeid)
        state = self.progress.pop(nodeid, None)
        if meta is None or state is None:
            return
        outcome = state.outcome or Outcome.PASS
        reviews = expected.reviews(self.manifest, take_reviews())
        passed = take_passed()
        judged = blame.judged(meta, outcome, state.detail, state.blame, passed)
        fields = blame.unreadable_fields(
            meta, outcome, state.detail, state.blame, passed, unjudged.take()
        )
        self._record(recording.result_of(meta, state, reviews, judged, fields))

    def _record(self, result: TestResult) -> None:
        self.results.append(result)
        if self.writer is not None:
            self.writer.test(result)

    # --- the end --------------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.meta:
            return
        matched = self.tally.matched if self.full_collection else None
        self.problems += expected.problems(self.manifest, self.results, matched)
        failing = any(r.outcome in FAILING for r in self.results)
        if (failing or self.problems) and session.exitstatus == 0:
            session.exitstatus = EX_FAILURES
        target = self.options.write_expectations
        if target and not suite.is_worker(self.config):
            # under xdist the controller writes it, from every worker's results
            from dsh_conformance.harness import write_expectations

            said = write_expectations.write(
                Path(target), self.manifest, self.results, self.options.adapter
            )
            sys.stderr.write(f"dsh-conformance: {said}\n")
        if self.writer is not None:
            guard = suite.guard(self.config)
            footer = recording.footer(
                suite.footer_status(session),
                int(session.exitstatus),
                self.problems,
                guard,
                time.monotonic() - self.started,
            )
            self.writer.footer(footer)
            self.writer.close()

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for problem in self.problems:
            terminalreporter.write_line(
                f"dsh-conformance: [{problem['kind']}] {problem['message']}"
            )
