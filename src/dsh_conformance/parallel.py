"""pytest-xdist runs: one record part per worker, merged into one record (D-138).

Every worker collects the whole selection, starts its own adapter instance and writes
its results to ``RECORD.<worker>.part`` (a complete record of its share).  At the end of
the session the controller merges the parts into ``RECORD``: the first part's header
(plus ``workers``), every test sorted by id, totals and expectation problems recomputed
over all results, and a footer that says how the whole run ended.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dsh_conformance.errors import EX_FAILURES, HarnessError
from dsh_conformance.options import of_config
from dsh_conformance.outcomes import FAILING
from dsh_conformance.suite import PART_KEY, is_worker

if TYPE_CHECKING:
    from dsh_conformance.adapters.expectations import Manifest
    from dsh_conformance.record import RunRecord, TestResult


def is_controller(config: pytest.Config) -> bool:
    """An xdist controller of a recorded run (it runs no test itself)."""
    dist = getattr(config.option, "dist", "no")
    return bool(of_config(config).record) and not is_worker(config) and dist != "no"


class ControllerPlugin:
    """Hands each worker its part path and merges the parts when the session ends."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.record = Path(str(of_config(config).record))
        self.parts: dict[str, Path] = {}
        self.started = time.monotonic()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        name = str(node.gateway.id)
        path = self.record.with_name(f"{self.record.name}.{name}.part")
        path.unlink(missing_ok=True)
        self.parts[name] = path
        node.workerinput[PART_KEY] = str(path)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        from dsh_conformance.record import load_record

        records: list[tuple[str, RunRecord]] = []
        for name, path in sorted(self.parts.items()):
            if path.exists() and path.stat().st_size:
                try:
                    records.append((name, load_record(path)))
                except HarnessError as exc:
                    raise pytest.UsageError(f"worker {name}: {exc}") from exc
        if not records:
            return
        self._write(session, records)
        for path in self.parts.values():
            path.unlink(missing_ok=True)

    def _write(self, session: pytest.Session, records: list[tuple[str, RunRecord]]) -> None:
        from dsh_conformance.harness import expected
        from dsh_conformance.record import RecordWriter
        from dsh_conformance.suite import footer_status

        tests: dict[str, TestResult] = {}
        for _, record in records:
            tests.update(record.by_nodeid())
        results = [tests[k] for k in sorted(tests)]
        harness = self.config.pluginmanager.get_plugin("dsh-harness")
        manifest = self._manifest()
        stale = {
            (p["id"], p["kind"]): p
            for _, record in records
            for p in record.expectation_problems
            if p.get("kind") == "stale"
        }
        problems = [*stale.values(), *expected.problems(manifest, results)]
        failing = any(r.outcome in FAILING for r in results)
        if (failing or problems) and session.exitstatus == 0:
            session.exitstatus = EX_FAILURES
        ending = footer_status(session)
        if ending["status"] == "complete":
            cut = [name for name, record in records if record.ending != "complete"]
            if cut:
                name = cut[0]
                part = dict(records)[name]
                how = (
                    "died mid-run (killed or crashed: its record part has no footer)"
                    if part.truncated
                    else f"ended {part.ending_text}"
                )
                ending = {"status": "aborted", "reason": f"worker {name} {how}"}
        header = {k: v for k, v in records[0][1].header.items() if k not in ("type", "format")}
        header.pop("format_version", None)
        writer = RecordWriter(self.record)
        writer.header({**header, "workers": len(self.parts)})
        for result in results:
            writer.test(result)
        writer.footer(
            {
                **ending,
                "exit_status": int(session.exitstatus),
                "expectation_problems": problems,
                "calls": sum(int((r.footer or {}).get("calls", 0)) for _, r in records),
                "restarts": sum(int((r.footer or {}).get("restarts", 0)) for _, r in records),
                "duration": round(time.monotonic() - self.started, 3),
                "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
        writer.close()
        if harness is not None:  # its terminal summary tells the whole run's problems
            harness.problems = problems
        options = of_config(self.config)
        if options.write_expectations:  # from every worker's results
            from dsh_conformance.harness import write_expectations

            target = Path(options.write_expectations)
            said = write_expectations.write(target, manifest, results, options.adapter)
            sys.stderr.write(f"dsh-conformance: {said}\n")

    def _manifest(self) -> Manifest | None:
        path = of_config(self.config).expectations
        if not path:
            return None
        from dsh_conformance.adapters.expectations import load_manifest
        from dsh_conformance.spec import load_catalog

        return load_manifest(str(path), known_requirements=load_catalog().requirements)
