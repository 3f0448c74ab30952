"""The harness inside pytest: selection, outcomes, expectations and the run record.

Registered by the pytest plugin for every session; it does nothing unless the session
collects conformance tests.  Kept apart from ``pytest_plugin`` so that module stays cheap
to import.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import platform
import sys
import time
from collections import Counter
from collections.abc import Generator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from attrs import define, field, frozen

from dsh_conformance import failure
from dsh_conformance.errors import EX_CONFIG, EX_FAILURES, EX_SOFTWARE, HarnessError
from dsh_conformance.outcomes import (
    APPLICABLE,
    FAILING,
    Outcome,
    classify_failure,
    classify_skip,
    fault_of,
    unreadable_of,
)
from dsh_conformance.outcomes import broke as adapter_broke
from dsh_conformance.record import RecordWriter, TestResult
from dsh_conformance.suite import GUARD_KEY, footer_status

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Entry, Manifest

#: Every kind of footer ``expectation_problems`` item the harness writes: the record
#: schema allows exactly these (tests/test_record_schema.py, D-215).
PROBLEM_KINDS = ("stale", "unexpected-pass", "blame-not-cited")
#: Longest failure text kept in the record per test.
LONGREPR_LIMIT = 8000
#: Longest reason --write-expectations writes (cut at a word).
REASON_LIMIT = 300
#: Longest message kept in the record per test (reports show it whole: D-179).
MESSAGE_LIMIT = 4000
#: Longest JSON of the request in flight shown in a message (the record keeps it whole).
REQUEST_SHOWN = 1000


@frozen
class ItemMeta:
    """What the harness knows about one selected conformance test."""

    test_id: str
    requirements: tuple[str, ...]
    capabilities: tuple[str, ...]
    entry: Entry | None


@define
class _Progress:
    outcome: Outcome | None = None
    detail: str = ""
    message: str = ""
    longrepr: str = ""
    duration: float = 0.0
    blame: tuple[str, ...] = ()
    request: str = ""
    failure: dict[str, Any] = field(factory=dict)


@define
class _EntryStats:
    matched: int = 0
    ran: int = 0
    failed: int = 0


def stable_test_id(item: pytest.Item, root: Path) -> str:
    """``conformance/<file>::<name>[<param>]``, the same wherever the suite is installed."""
    from dsh_conformance.suite import resolved

    path = resolved(str(item.path))
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.name
    _, sep, rest = item.nodeid.partition("::")
    return f"conformance/{rel}{sep}{rest}"


def spec_version() -> str:
    """A content hash of the requirement catalog: two runs agree on the spec iff equal."""
    from dsh_conformance.model import jsstr
    from dsh_conformance.spec import raw_catalog

    digest = hashlib.sha256(jsstr.stringify(raw_catalog()).encode("utf-8"))
    return "sha256:" + digest.hexdigest()[:16]


_FOREIGN = ("site-packages", "/_pytest/", "/pluggy/", "/hypothesis/")


def _short_traceback(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The traceback from the test function down, in pytest's short style: no fixture
    reprs, no pytest, pluggy or Hypothesis frames, no frames that hide themselves."""

    def frames(info: pytest.ExceptionInfo[BaseException]) -> Any:
        tb = info.traceback
        tb = tb.cut(path=item.path) or tb
        kept = tb.filter(lambda e: not any(f in str(e.path) for f in _FOREIGN)) or tb
        return kept.filter(info)

    try:
        return str(excinfo.getrepr(style="short", funcargs=False, tbfilter=frames))
    except Exception:  # a traceback that cannot be rendered must not lose the failure
        return excinfo.exconly()


def _words(text: str, limit: int) -> str:
    """*text* cut at the last whole word within *limit* characters (a manifest reason)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@define(eq=False)
class HarnessPlugin:
    """pytest hooks of the conformance harness."""

    config: pytest.Config
    meta: dict[str, ItemMeta] = field(factory=dict)
    progress: dict[str, _Progress] = field(factory=dict)
    manifest: Manifest | None = None
    entry_stats: dict[str, _EntryStats] = field(factory=dict)
    full_collection: bool = False
    writer: RecordWriter | None = None
    results: list[TestResult] = field(factory=list)
    problems: list[dict[str, str]] = field(factory=list)
    started: float = field(factory=time.monotonic)
    signals: contextlib.ExitStack = field(factory=contextlib.ExitStack)
    #: ``--dsh-resume``: results of the earlier run, carried into this run's record.
    carried: dict[str, TestResult] = field(factory=dict)
    #: ``--dsh-last-failed``: the only test ids to run.
    rerun: set[str] | None = None
    #: Hypothesis settings to put back when a test finishes (``_without_shrinking``).
    restore: dict[str, tuple[Any, Any]] = field(factory=dict)

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
        from dsh_conformance import suite as plugin

        conformance = [item for item in items if plugin.is_conformance_item(item)]
        if not conformance:
            return
        from dsh_conformance import shrinking
        from dsh_conformance.spec import load_catalog

        shrinking.cap_shrinking()  # D-312: a failing test shrinks for seconds, not minutes
        catalog = load_catalog()
        self._load_earlier()
        plugin.check_traceability(conformance, catalog.requirements)
        root = plugin.conformance_root()
        self.full_collection = self._covers_package(conformance, root)
        self.manifest = self._load_manifest(catalog.requirements)
        if self.manifest is not None:
            self.entry_stats = {e.id: _EntryStats() for e in self.manifest.entries}

        profile = str(config.getoption("dsh_spec_profile"))
        patterns = [str(p) for p in config.getoption("dsh_requirement") or ()]
        capabilities = {str(c) for c in config.getoption("dsh_capability") or ()}
        exact = {str(t) for t in config.getoption("dsh_test", None) or ()}
        kept: list[pytest.Item] = []
        removed: list[pytest.Item] = []
        for item in items:
            if not plugin.is_conformance_item(item):
                kept.append(item)
                continue
            reqs = tuple(plugin.requirement_ids(item))
            caps = tuple(sorted({str(m.args[0]) for m in item.iter_markers("capability")}))
            test_id = stable_test_id(item, root)
            entry = self.manifest.match(test_id, reqs) if self.manifest else None
            if self.manifest is not None:
                for e in self.manifest.entries:
                    if e.matches(test_id, reqs):
                        self.entry_stats[e.id].matched += 1
            selected = any(
                profile in catalog.requirements[r].profiles for r in reqs
            ) and self._wanted(reqs, caps, patterns, capabilities)
            if exact and test_id not in exact:
                selected = False
            if selected and self._done_earlier(test_id):
                selected = False
            if selected:
                kept.append(item)
                self.meta[item.nodeid] = ItemMeta(test_id, reqs, caps, entry)
            else:
                removed.append(item)
        if removed:
            config.hook.pytest_deselected(items=removed)
            items[:] = kept

    def _load_earlier(self) -> None:
        """Read ``--dsh-resume`` / ``--dsh-last-failed`` before this run's record exists
        (it may be the same file)."""
        from dsh_conformance.record import load_record

        resume = self.config.getoption("dsh_resume", None)
        last_failed = self.config.getoption("dsh_last_failed", None)
        try:
            if resume:
                self.carried = {t.nodeid: t for t in load_record(str(resume)).tests}
            if last_failed:
                tests = load_record(str(last_failed)).tests
                self.rerun = {t.nodeid for t in tests if t.outcome in FAILING}
        except HarnessError as exc:
            raise pytest.UsageError(str(exc)) from exc

    def _done_earlier(self, test_id: str) -> bool:
        if test_id in self.carried:
            return True
        return self.rerun is not None and test_id not in self.rerun

    def _carry_over(self) -> None:
        """Write the resumed run's earlier results first, as if they had just run."""
        for result in self.carried.values():
            self._count_for_entries(result)
            self.results.append(result)
            if self.writer is not None:
                self.writer.test(result)

    def _count_for_entries(self, result: TestResult) -> None:
        if self.manifest is None or result.outcome not in APPLICABLE:
            return
        for e in self.manifest.entries:
            if e.matches(result.nodeid, result.requirements):
                stats = self.entry_stats[e.id]
                stats.ran += 1
                stats.failed += result.outcome in (FAILING | {Outcome.XFAIL})

    @staticmethod
    def _wanted(
        reqs: Sequence[str], caps: Sequence[str], patterns: Sequence[str], wanted: set[str]
    ) -> bool:
        if patterns and not any(fnmatch.fnmatchcase(r, p) for r in reqs for p in patterns):
            return False
        return not wanted or bool(wanted.intersection(caps))

    @staticmethod
    def _covers_package(items: Sequence[pytest.Item], root: Path) -> bool:
        from dsh_conformance.suite import resolved

        files = {resolved(str(item.path)) for item in items}
        return all(path.resolve() in files for path in root.rglob("test_*.py"))

    def _load_manifest(self, requirements: Any) -> Manifest | None:
        path = self.config.getoption("dsh_expectations")
        if not path:
            return None
        from dsh_conformance.adapters.expectations import load_manifest

        try:
            manifest = load_manifest(str(path), known_requirements=requirements)
        except HarnessError as exc:
            raise pytest.UsageError(str(exc)) from exc
        if manifest.versioned:  # conditional entries need the handshake's versions now
            manifest = manifest.for_version(*self._implementation_versions())
        return manifest

    def _implementation_versions(self) -> tuple[str, dict[str, str]]:
        """The handshake's version and components (D-188)."""
        from dsh_conformance import suite as plugin

        try:
            info = plugin.implementation(self.config).handshake.implementation
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
        from dsh_conformance import parallel

        record = parallel.record_path(self.config)  # an xdist worker writes its own part
        if record:
            self.writer = RecordWriter(record)
        from dsh_conformance import suite as plugin

        adapter_name = str(self.config.getoption("--dsh-adapter"))
        try:
            impl = plugin.implementation(self.config)
        except Exception as exc:
            from dsh_conformance.adapters.wire import printable

            reason = printable(str(exc))
            if self.writer is not None:
                self.writer.header(self._header({"name": adapter_name, "error": reason}))
                self.writer.footer({"status": "aborted", "reason": reason})
                self.writer.close()
                self.writer = None
            self.meta.clear()
            from dsh_conformance.model.errors import DshError, ErrorCode

            bad_name = isinstance(exc, DshError) and exc.code == ErrorCode.INVALID_ARGUMENT
            pytest.exit(  # a factory that cannot make an adapter from its name: config (78)
                f"[adapter-unavailable] cannot start {adapter_name!r}: {reason}",
                returncode=EX_CONFIG if bad_name else EX_SOFTWARE,
            )
        if self.writer is not None:
            handshake = impl.handshake
            guard = plugin.guard(self.config)
            inner = guard.adapter if guard is not None else None
            self.writer.header(
                self._header(
                    {
                        "name": adapter_name,
                        "transport": "subprocess" if hasattr(inner, "argv") else "in-process",
                        "protocol": handshake.protocol,
                        "implementation": handshake.implementation.to_json(),
                        "capabilities": sorted(handshake.capabilities),
                    }
                )
            )
        self._carry_over()

    def _header(self, adapter: dict[str, Any]) -> dict[str, Any]:
        from hypothesis import settings

        from dsh_conformance import __version__

        current = settings()
        seed = self.config.getoption("hypothesis_seed", None)
        if isinstance(seed, str) and seed.isdigit():
            seed = int(seed)  # the CLI passes digits: record a number, replayable as --seed
        return {
            "suite_version": __version__,
            "spec_version": spec_version(),
            "spec_profile": str(self.config.getoption("dsh_spec_profile")),
            "adapter": adapter,
            "hypothesis": {
                "profile": settings.get_current_profile_name(),
                "seed": seed,
                "derandomize": current.derandomize,
                "max_examples": current.max_examples,
                **self._max_examples_option(),
            },
            "expectations": self.manifest.path if self.manifest else None,
            "filters": {
                "requirements": list(self.config.getoption("dsh_requirement") or ()),
                "capabilities": list(self.config.getoption("dsh_capability") or ()),
                "keyword": self.config.getoption("keyword", "") or "",
                **self._exact_tests(),
            },
            "gate": {
                "require": sorted({str(c) for c in self.config.getoption("dsh_require") or ()}),
                "allow_empty": bool(self.config.getoption("dsh_allow_empty", False)),
            },
            "selected": len(self.meta) + len(self.carried),
            **self._lineage(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": sys.version.split()[0],
            "platform": platform.platform(terse=True),
        }

    def _max_examples_option(self) -> dict[str, int]:
        """``--max-examples`` when given (a replay passes it again)."""
        given = self.config.getoption("dsh_max_examples", None)
        return {"max_examples_option": int(given)} if given else {}

    def _exact_tests(self) -> dict[str, list[str]]:
        """``--dsh-test``: the exact test ids selected (absent when none were named)."""
        tests = [str(t) for t in self.config.getoption("dsh_test", None) or ()]
        return {"tests": tests} if tests else {}

    def _lineage(self) -> dict[str, Any]:
        """Which earlier record this run continues or reruns (absent for a fresh run)."""
        out: dict[str, Any] = {}
        if self.config.getoption("dsh_resume", None):
            out["resumed"] = len(self.carried)
        if self.config.getoption("dsh_last_failed", None):
            out["rerun_failed"] = True
        return out

    # --- running --------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        meta = self.meta.get(item.nodeid)
        if meta is None:
            return
        from dsh_conformance import signals

        if signals.received() is not None:
            raise KeyboardInterrupt  # its first KeyboardInterrupt was lost (D-136)
        guard = self.config.stash.get(GUARD_KEY, None)
        if guard is not None:
            guard.begin_test()
        self.progress[item.nodeid] = _Progress()
        from dsh_conformance import unjudged
        from dsh_conformance.checks import take_passed, take_reviews

        take_reviews()  # nothing left over from an unrecorded test is this test's
        take_passed()
        unjudged.take()
        entry = meta.entry
        if entry is not None and entry.status == "unsupported":
            pytest.skip(f"unsupported: {entry.reason} (expectation {entry.id})")
        if entry is not None and entry.status == "xfail":
            self._without_shrinking(item)

    def _without_shrinking(self, item: pytest.Item) -> None:
        """A failure the manifest expects needs a failing example, not the smallest one
        (D-183): Hypothesis skips shrinking it (most of a known divergence's time: minutes
        on the published release), restored when the test finishes."""
        test: Any = getattr(item, "obj", None)
        current = getattr(test, "_hypothesis_internal_use_settings", None)
        if current is None or not getattr(test, "is_hypothesis_test", False):
            return
        from hypothesis import Phase, settings

        phases = tuple(p for p in current.phases if p not in (Phase.shrink, Phase.explain))
        self.restore[item.nodeid] = (test, current)
        test._hypothesis_internal_use_settings = settings(current, phases=phases)

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
            if report.failed and state.outcome in (None, Outcome.PASS):
                state.outcome = Outcome.ERROR
                state.message = _short(f"teardown failed: {report.longreprtext}", MESSAGE_LIMIT)
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
        state: _Progress,
        item: pytest.Item | None = None,
    ) -> None:
        guard = self.config.stash.get(GUARD_KEY, None)
        if report.passed:
            outcome = Outcome.PASS
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            outcome = Outcome.XFAIL if hasattr(report, "wasxfail") else classify_skip(reason)
            state.message = _short(str(reason).removeprefix("Skipped: "), MESSAGE_LIMIT)
        else:
            exc = call.excinfo.value if call.excinfo is not None else None
            fault = guard.fault if guard is not None else None
            outcome = classify_failure(exc, fault) if exc is not None else Outcome.FAIL
            state.blame = self._blame(exc, meta)
            explanation = self._explain(meta, state.blame)
            report.sections.append(("dsh-conformance", explanation))
            traceback = report.longreprtext
            if call.excinfo is not None and item is not None:
                traceback = _short_traceback(item, call.excinfo)
            state.message = _short(
                failure.message(exc) if exc is not None else "the test failed", MESSAGE_LIMIT
            )
            state.longrepr = _short(failure.clean(traceback), LONGREPR_LIMIT)
            state.failure = failure.build(
                exc, state.blame, self._sentences(), self._replay(meta), state.longrepr
            )
            broke = fault_of(exc, fault) if exc is not None else None
            if broke is not None:  # exit status and stderr tail, not "FlakyFailure"
                text = f"{broke.kind}: {broke.message}"
                from dsh_conformance.guard import REQUEST_ATTR

                request = getattr(broke, REQUEST_ATTR, None)  # the request of *this* fault
                if request is None and guard is not None:
                    request = guard.fault_request
                if request is not None:  # the input that broke it (D-180)
                    from dsh_conformance.reporting.escape import json_text, show_value

                    state.request = json_text(request)
                    shown = show_value(request, REQUEST_SHOWN)
                    text = f"{broke.kind} (request in flight: {shown}): {broke.message}"
                state.message = _short(text, MESSAGE_LIMIT)
                state.longrepr = _short(f"{text}\n\n{state.longrepr}", LONGREPR_LIMIT)
                state.failure = {**state.failure, "checks": [], "message": text}
            unreadable = unreadable_of(exc) if exc is not None and broke is None else None
            if unreadable is not None:  # a protocol problem of the run, not a requirement's
                self._unreadable(state, unreadable)
                state.failure = {**state.failure, "checks": [], "message": state.message}
            if outcome in (Outcome.CRASH, Outcome.TIMEOUT, Outcome.PROTOCOL):
                state.blame = ()  # the adapter broke: no requirement is blamed (D-212)
        entry = meta.entry
        if entry is not None and entry.status == "xfail":
            if outcome in FAILING:
                state.detail = str(outcome)
                outcome = Outcome.XFAIL
                report.outcome = "skipped"
                report.wasxfail = f"{entry.id}: {entry.reason}"
            elif outcome is Outcome.PASS and not entry.is_requirement:
                outcome = Outcome.XPASS
                report.outcome = "failed"
                report.longrepr = f"[XPASS(strict)] expected to fail ({entry.id}: {entry.reason})"
                state.message = f"unexpected pass: the manifest says {entry.id} fails"
        state.outcome = outcome

    @staticmethod
    def _unreadable(state: _Progress, unreadable: Any) -> None:
        """A result the check could not read: the op, its arguments, the result, why."""
        from dsh_conformance.reporting.escape import json_text, show_value

        shown = {
            "op": str(unreadable.op),
            "args": unreadable.arguments,
            "result": unreadable.result,
            "reason": str(unreadable.reason),
        }
        try:
            state.request = json_text(shown)
        except (TypeError, ValueError):
            state.request = json_text(
                {**shown, "args": repr(shown["args"]), "result": repr(shown["result"])}
            )
        text = (
            f"protocol: the result of {unreadable.op} cannot be read: {unreadable.reason} "
            f"(args {show_value(unreadable.arguments, REQUEST_SHOWN)}, "
            f"result {show_value(unreadable.result, REQUEST_SHOWN)})"
        )
        state.message = _short(text, MESSAGE_LIMIT)
        state.longrepr = _short(f"{text}\n\n{state.longrepr}", LONGREPR_LIMIT)

    def _sentences(self) -> dict[str, str]:
        """Each requirement's sentence of a note (its clause, else its quote)."""
        from dsh_conformance.spec import load_catalog

        return {
            rid: str(getattr(req, "clause", "") or req.quote)
            for rid, req in load_catalog().requirements.items()
        }

    def _explain(self, meta: ItemMeta, blame: Sequence[str]) -> str:
        """Which requirement failed, how it is judged, and the command that replays it."""
        from dsh_conformance.spec import load_catalog

        catalog = load_catalog().requirements
        lines = []
        for rid in blame:
            req = catalog.get(rid)
            if req is not None:
                lines.append(f"blames {rid} ({req.level}, {req.verdict} verdict): {req.title}")
        lines.append(f"replay: {self._replay(meta)}")
        return "\n".join(lines)

    def _replay(self, meta: ItemMeta) -> str:
        """``dsh-conformance run`` selecting this one test with the same examples."""
        import shlex

        from hypothesis import settings

        argv = ["dsh-conformance", "run", "--adapter", str(self.config.getoption("--dsh-adapter"))]
        seed = self.config.getoption("hypothesis_seed", None)
        if seed is not None:
            argv += ["--seed", str(seed)]
        profile = settings.get_current_profile_name()
        if profile in {"quick", "dev", "ci", "thorough"}:
            argv += ["--hypothesis-profile", profile]
        given = self.config.getoption("dsh_max_examples", None)
        if given:
            argv += ["--max-examples", str(given)]
        argv += ["--spec-profile", str(self.config.getoption("dsh_spec_profile"))]
        argv += ["--test", meta.test_id]
        return shlex.join(argv)

    def _blame(self, exc: BaseException | None, meta: ItemMeta) -> tuple[str, ...]:
        """What a failure blames: its failed checks, or the one requirement it cites.

        A failure outside any ``check`` in a test citing several requirements blames
        them all: imprecise, never silent (tests/test_blame.py keeps such tests rare).
        """
        from dsh_conformance.checks import blamed, unreadable

        if exc is not None and unreadable(exc) is not None:
            return ()  # a result no check could read blames no requirement (D-251)
        ids = blamed(exc) if exc is not None else ()
        stray = [i for i in ids if i not in meta.requirements]
        if stray:
            self.problems.append(
                {
                    "id": meta.test_id,
                    "kind": "blame-not-cited",
                    "message": f"{meta.test_id} blames {', '.join(stray)}, which it does not "
                    "cite: add the id to its @pytest.mark.req",
                }
            )
        return ids or meta.requirements

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        state = self.progress.get(report.nodeid)
        if state is not None:
            state.duration += report.duration

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple[str, int, str]) -> None:
        if nodeid in self.restore:
            test, current = self.restore.pop(nodeid)
            test._hypothesis_internal_use_settings = current
        meta = self.meta.get(nodeid)
        state = self.progress.pop(nodeid, None)
        if meta is None or state is None:
            return
        outcome = state.outcome or Outcome.PASS
        entry = meta.entry
        if self.manifest is not None:
            for e in self.manifest.entries:
                if e.matches(meta.test_id, meta.requirements) and outcome in APPLICABLE:
                    stats = self.entry_stats[e.id]
                    stats.ran += 1
                    stats.failed += outcome in (FAILING | {Outcome.XFAIL})
        result = TestResult(
            nodeid=meta.test_id,
            outcome=outcome,
            requirements=meta.requirements,
            capabilities=meta.capabilities,
            duration=state.duration,
            message=state.message,
            detail=state.detail,
            expectation=entry.id if entry is not None else "",
            expectation_reason=entry.reason if entry is not None else "",
            longrepr=state.longrepr if outcome in FAILING or state.detail else "",
            blame=state.blame if outcome in FAILING or state.detail else (),
            request=state.request if outcome in FAILING or state.detail else "",
            failure=state.failure if outcome in FAILING or state.detail else {},
            reviews=self._reviews(),
            **self._judgement(meta, state, outcome),
        )
        self.results.append(result)
        if self.writer is not None:
            self.writer.test(result)

    @staticmethod
    def _judgement(meta: ItemMeta, state: _Progress, outcome: Outcome) -> dict[str, Any]:
        """``judged``: for a failed test, the cited ids it concluded on (D-330): those it
        blames and those whose every check ran and passed; None for any other test (it
        judges every id it cites, or none when the adapter broke).  ``unjudged``: the
        checks that could not read a field (D-521, D-522), by cited id."""
        from dsh_conformance import unjudged
        from dsh_conformance.checks import take_passed

        passed = take_passed()
        entries = unjudged.take()
        if adapter_broke(outcome, state.detail):
            return {"judged": None}
        concluded = {*state.blame, *passed}
        cited = tuple(r for r in meta.requirements if r not in state.blame)
        found = tuple(
            e for e in unjudged.resolve(entries, cited, concluded) if e["requirement"] in cited
        )
        if not (outcome in FAILING or state.detail):
            return {"judged": None, "unjudged": found}
        judged = tuple(dict.fromkeys([*state.blame, *(r for r in passed if r in set(cited))]))
        return {"judged": judged, "unjudged": found}

    def _reviews(self) -> tuple[dict[str, Any], ...]:
        """The reviews the test asked for (checks.review, D-199), each with the host's
        review from the manifest when one names the same requirement and text sha256."""
        from dsh_conformance.checks import take_reviews

        out = []
        for item in take_reviews():
            if self.manifest is None:
                out.append(item)
                continue
            found = self.manifest.review_of(item["requirement"], item["sha256"])
            if found is not None:
                out.append({**item, "review": found.to_json()})
                continue
            # A review of the same requirement for another text: the text changed since.
            stale = [
                r.sha256 for r in self.manifest.reviews if r.requirement == item["requirement"]
            ]
            out.append({**item, "stale": stale} if stale else item)
        return tuple(out)

    # --- the end --------------------------------------------------------------------------

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if not self.meta:
            return
        self._check_entries(session)
        totals = Counter(r.outcome for r in self.results)
        failing = sum(totals[o] for o in FAILING)
        if (failing or self.problems) and session.exitstatus == 0:
            session.exitstatus = EX_FAILURES
        if self.config.getoption("dsh_write_expectations") and not hasattr(
            self.config, "workerinput"
        ):  # under xdist the controller writes it, from every worker's results
            self._write_expectations(Path(str(self.config.getoption("dsh_write_expectations"))))
        if self.writer is not None:
            guard = self.config.stash.get(GUARD_KEY, None)
            inner = guard.adapter if guard is not None else None
            self.writer.footer(
                {
                    **footer_status(session),
                    "exit_status": int(session.exitstatus),
                    "expectation_problems": self.problems,
                    "calls": guard.calls if guard is not None else 0,
                    "restarts": int(getattr(inner, "restarts", 0)),
                    "duration": round(time.monotonic() - self.started, 3),
                    "finished": datetime.now(UTC).isoformat(timespec="seconds"),
                }
            )
            self.writer.close()

    def _check_entries(self, session: pytest.Session) -> None:
        if self.manifest is None:
            return
        for entry in self.manifest.entries:
            stats = self.entry_stats[entry.id]
            if stats.matched == 0 and self.full_collection:
                self.problems.append(
                    {
                        "id": entry.id,
                        "kind": "stale",
                        "message": f"{entry.id} matches no test of the suite: remove the "
                        "entry or fix its id",
                    }
                )
            elif (
                entry.is_requirement and entry.status == "xfail" and stats.ran and not stats.failed
            ):
                self.problems.append(
                    {
                        "id": entry.id,
                        "kind": "unexpected-pass",
                        "message": f"{entry.id} is expected to fail but all {stats.ran} of its "
                        "tests passed: remove the entry",
                    }
                )

    def _write_expectations(self, path: Path) -> None:
        from dsh_conformance.adapters.expectations import Entry, render_manifest, update_manifest
        from dsh_conformance.reporting.failuretext import headline

        old = {e.id: e for e in self.manifest.entries} if self.manifest else {}
        # entries for other implementation versions are kept as they are
        entries: dict[str, Entry] = (
            {e.id: e for e in self.manifest.inactive} if self.manifest else {}
        )
        for result in self.results:
            failed = result.outcome in FAILING - {Outcome.XPASS} or result.detail
            if result.expectation and result.expectation in old:
                kept = old[result.expectation]
                still = result.outcome is Outcome.UNSUPPORTED or failed
                if still and kept.status in ("unsupported", "xfail"):
                    entries[kept.id] = kept
                    continue
            if failed:
                raw = result.detail or str(result.outcome)
                line = headline(result)  # one clean line: no class name, no escapes
                entries[result.nodeid] = Entry(
                    id=result.nodeid,
                    status="xfail",
                    reason=_words(f"{raw}: {line}" if line else raw, REASON_LIMIT),
                )
        adapter = str(self.config.getoption("--dsh-adapter"))
        if path.is_file():  # keep the file's comments and order
            path.write_text(
                update_manifest(path.read_text(encoding="utf-8"), list(entries.values())),
                encoding="utf-8",
            )
            return
        text = render_manifest(
            list(entries.values()),
            adapter=adapter,
            comment=f"Expectation manifest for {adapter}, written by --write-expectations.\n"
            "Review every reason and add links before committing.",
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for problem in self.problems:
            terminalreporter.write_line(
                f"dsh-conformance: [{problem['kind']}] {problem['message']}"
            )
