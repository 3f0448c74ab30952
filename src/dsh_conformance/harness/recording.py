"""The record's lines as the harness writes them: header, one line per test, footer.

The header says what ran and how (suite and spec versions, the adapter's handshake, the
Hypothesis profile and seed, the selection and gate: D-124), so ``--resume`` and a
replay can run the same again; the footer says how the run ended (D-136) and what the
manifest check found.  ``record`` writes and reads the lines; this module decides what
they say.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dsh_conformance.outcomes import FAILING, Outcome
from dsh_conformance.record import TestResult

if TYPE_CHECKING:
    from dsh_conformance.adapters.client import Implementation
    from dsh_conformance.guard import FaultGuard
    from dsh_conformance.harness.evidence import Evidence
    from dsh_conformance.harness.selection import ItemMeta
    from dsh_conformance.options import RunOptions


def spec_version() -> str:
    """A content hash of the requirement catalog: two runs agree on the spec iff equal."""
    from dsh_conformance.model import jsstr
    from dsh_conformance.spec import raw_catalog

    digest = hashlib.sha256(jsstr.stringify(raw_catalog()).encode("utf-8"))
    return "sha256:" + digest.hexdigest()[:16]


def adapter_line(name: str, impl: Implementation, guard: FaultGuard | None) -> dict[str, Any]:
    """The header's ``adapter``: its name, transport and handshake."""
    handshake = impl.handshake
    inner = guard.adapter if guard is not None else None
    return {
        "name": name,
        "transport": "subprocess" if hasattr(inner, "argv") else "in-process",
        "protocol": handshake.protocol,
        "implementation": handshake.implementation.to_json(),
        "capabilities": sorted(handshake.capabilities),
    }


def header(
    options: RunOptions,
    adapter: Mapping[str, Any],
    expectations: str | None,
    selected: int,
    carried: int,
) -> dict[str, Any]:
    """The header of a run with *options* against *adapter* (its ``adapter_line``, or
    the name and error of one that would not start): *selected* tests to run, *carried*
    more from the record it resumes."""
    from hypothesis import settings

    from dsh_conformance import __version__

    current = settings()
    max_examples = {"max_examples_option": options.max_examples} if options.max_examples else {}
    return {
        "suite_version": __version__,
        "spec_version": spec_version(),
        "spec_profile": options.spec_profile,
        "adapter": dict(adapter),
        "hypothesis": {
            "profile": settings.get_current_profile_name(),
            "seed": options.seed,
            "derandomize": current.derandomize,
            "max_examples": current.max_examples,
            **max_examples,  # --max-examples when given (a replay passes it again)
        },
        "expectations": expectations,
        "filters": {
            "requirements": list(options.requirements),
            "capabilities": list(options.capabilities),
            "keyword": options.keyword,
            **({"tests": list(options.tests)} if options.tests else {}),
        },
        "gate": {"require": sorted(set(options.require)), "allow_empty": options.allow_empty},
        "selected": selected + carried,
        **_lineage(options, carried),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(terse=True),
    }


def _lineage(options: RunOptions, carried: int) -> dict[str, Any]:
    """Which earlier record this run continues or reruns (absent for a fresh run)."""
    out: dict[str, Any] = {}
    if options.resume:
        out["resumed"] = carried
    if options.last_failed:
        out["rerun_failed"] = True
    return out


def result_of(
    meta: ItemMeta,
    state: Evidence,
    reviews: Sequence[Mapping[str, Any]],
    judged: tuple[str, ...] | None,
    unjudged: Sequence[Mapping[str, Any]] = (),
) -> TestResult:
    """The record line of a finished test; what only a failure has is kept only then."""
    outcome = state.outcome or Outcome.PASS
    entry = meta.entry
    failed = outcome in FAILING or bool(state.detail)
    return TestResult(
        nodeid=meta.test_id,
        outcome=outcome,
        requirements=meta.requirements,
        capabilities=meta.capabilities,
        duration=state.duration,
        message=state.message,
        detail=state.detail,
        expectation=entry.id if entry is not None else "",
        expectation_reason=entry.reason if entry is not None else "",
        longrepr=state.longrepr if failed else "",
        blame=state.blame if failed else (),
        request=state.request if failed else "",
        failure=state.failure if failed else {},
        reviews=reviews,
        judged=judged,
        unjudged=tuple(unjudged),
        not_reproduced=state.not_reproduced,
        expectation_blames=state.expected_blame,
    )


def footer(
    ending: Mapping[str, str],
    exit_status: int,
    problems: Sequence[Mapping[str, str]],
    guard: FaultGuard | None,
    duration: float,
) -> dict[str, Any]:
    """The footer (the writer adds the totals): how the run ended, its exit status as
    pytest saw it (the CLI settles it later, D-176), the manifest's problems, the
    adapter's calls and restarts."""
    inner = guard.adapter if guard is not None else None
    return {
        **ending,
        "exit_status": int(exit_status),
        "expectation_problems": list(problems),
        "calls": guard.calls if guard is not None else 0,
        "restarts": int(getattr(inner, "restarts", 0)),
        "duration": round(duration, 3),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
    }
